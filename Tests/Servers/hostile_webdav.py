#!/usr/bin/env python3
"""A WebDAV server that lies, for `carouseld sync` through rclone
(sync_e2e.py): one folder whose PROPFIND lists files by the sizes a
test gives, and whose GET serves something else.

    python3 Tests/Servers/hostile_webdav.py --port-file F --files JSON

JSON maps a name to {"listed": N, "serve": "FILE" | "endless" | "drip"}:
  FILE     the bytes of FILE (a test picture)
  endless  a JPEG's first bytes, then filler without end (a stream longer than listed)
  drip     the listed size, a byte every 0.9 s (under rclone's stall timeout)
GET /_test/sent answers {name: bytes sent so far} (what reached the socket).
Only what rclone's webdav backend (vendor = other) asks: PROPFIND depth 1, GET.
"""
import argparse
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODIFIED = "Mon, 01 Jan 2024 10:00:00 GMT"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_PROPFIND(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        files = self.server.files
        if path.rstrip("/") not in ("", "/photos"):
            name = path.rsplit("/", 1)[-1]
            if name not in files:
                return self.answer(404, b"", "text/plain")
            entries = [(path, files[name]["listed"])]
        else:
            entries = [("/photos/", None)] + [("/photos/" + urllib.parse.quote(n), f["listed"]) for n, f in sorted(files.items())]
        out = ['<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:">']
        for href, size in entries:
            prop = ("<d:resourcetype><d:collection/></d:resourcetype>" if size is None else
                    f"<d:resourcetype/><d:getcontentlength>{size}</d:getcontentlength><d:getcontenttype>image/jpeg</d:getcontenttype>")
            out.append(f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{prop}<d:getlastmodified>{MODIFIED}"
                       "</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")
        out.append("</d:multistatus>")
        self.answer(207, "".join(out).encode(), "application/xml; charset=utf-8")

    def answer(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if path == "/_test/sent":
            with self.server.lock:
                return self.answer(200, json.dumps(self.server.sent).encode(), "application/json")
        name = path.rsplit("/", 1)[-1]
        f = self.server.files.get(name)
        if f is None:
            return self.answer(404, b"not found", "text/plain")
        serve = f["serve"]
        self.close_connection = True
        try:
            if serve == "endless":
                # More than listed, without end: chunked, as a streaming server sends it.
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"\xff\xd8" + b"\0" * (64 << 10)
                while True:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.sent(name, len(chunk))
            elif serve == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(f["listed"]))
                self.end_headers()
                for _ in range(f["listed"]):
                    self.wfile.write(b"\xff")
                    self.wfile.flush()
                    self.sent(name, 1)
                    time.sleep(0.9)
            else:
                with open(serve, "rb") as fh:
                    body = fh.read()
                self.answer(200, body, "image/jpeg")
                self.sent(name, len(body))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def sent(self, name, n):
        with self.server.lock:
            self.server.sent[name] = self.server.sent.get(name, 0) + n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--files", required=True)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.files = json.loads(args.files)
    server.sent = {}
    server.lock = threading.Lock()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
