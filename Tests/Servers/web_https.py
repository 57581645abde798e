"""The frame's page over HTTPS, and connections that never ask: checks of
web_e2e.py (which passes its Frame and helpers in), against the real
carouseld-web beside the real daemon.

A test CA of its own signs the page's certificate (openssl), and every
HTTPS request here verifies it: a page served with another certificate, or
without TLS, fails them.
"""
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import time
import urllib.parse

from checks import Failure, free_port, until


def expect(condition, what):
    if not condition:
        raise Failure(what)


def certificates(folder):
    """A CA, the page's certificate for 127.0.0.1 signed by it, and a key
    of another certificate; returns their paths."""
    os.makedirs(folder, exist_ok=True)

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder, timeout=60)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl("req", "-x509", *ec, "-days", "2", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=carouseld test CA")
    openssl("req", *ec, "-keyout", "page.key", "-out", "page.csr", "-subj", "/CN=frame.local")
    with open(os.path.join(folder, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:frame.local,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "page.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-out", "page.crt", "-extfile", "san.ext")
    openssl("req", "-x509", *ec, "-days", "2", "-keyout", "other.key", "-out", "other.crt", "-subj", "/CN=other")
    for key in ("page.key", "other.key"):
        os.chmod(os.path.join(folder, key), 0o600)  # a secret: its owner's alone
    return {name: os.path.join(folder, name) for name in ("ca.crt", "page.crt", "page.key", "other.key")}


def send(connection, page_origin, method, path, body, headers, cookie, origin):
    """One request on `connection` as the page's browser sends it (`origin`
    True: the page's own Origin on all but GET and HEAD; a string: that one;
    False: none); returns the status, the headers (lower-case names), the
    body and the TLS version spoken (None over plain HTTP)."""
    h = dict(headers or {})
    if origin is True and method not in ("GET", "HEAD"):
        h["Origin"] = page_origin
    elif isinstance(origin, str):
        h["Origin"] = origin
    if cookie:
        h["Cookie"] = cookie
    connection.request(method, path, body=body, headers=h)
    r = connection.getresponse()
    data = r.read()
    version = connection.sock.version() if isinstance(connection.sock, ssl.SSLSocket) else None
    connection.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data, version


def ask_to_upgrade(s, port, origin, cookie):
    """Asks for the live view's WebSocket on `s` (no Origin or Cookie when
    None); returns what came back, to the end of the response's head."""
    lines = ["GET /live HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    if origin:
        lines.append(f"Origin: {origin}")
    if cookie:
        lines.append(f"Cookie: {cookie}")
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        more = s.recv(4096)
        if not more:
            break
        data += more
    return data


class Https:
    """Requests to a Frame's page over HTTPS, verified against the test CA."""

    def __init__(self, frame, port, ca):
        self.frame, self.port = frame, port
        self.origin = f"https://127.0.0.1:{port}"
        self.context = ssl.create_default_context(cafile=ca)

    def request(self, method, path, body=None, headers=None, cookie=None, origin=True):
        """As Frame.request, and the TLS version spoken."""
        c = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30, context=self.context)
        return send(c, self.origin, method, path, body, headers, cookie, origin)

    def live(self, cookie, origin):
        """A WebSocket on /live over TLS; returns the response's head and its first bytes after it."""
        s = self.context.wrap_socket(socket.create_connection(("127.0.0.1", self.port), timeout=10),
                                     server_hostname="127.0.0.1")
        data = ask_to_upgrade(s, self.port, origin, cookie)
        head, _, rest = data.partition(b"\r\n\r\n")
        if head.startswith(b"HTTP/1.1 101") and not rest:
            rest = s.recv(4096)
        s.close()
        return head, rest


def https_frame(suite, make_frame, password):
    """A Frame (made by `make_frame(name, idle_timeout, extra)`) whose page
    is served over HTTPS with the test CA's certificate, its password set;
    returns it and its Https."""
    files = certificates(os.path.join(suite.folder, "tls"))
    port = free_port()
    frame = make_frame("https", 3, f"https_listen = 127.0.0.1:{port}\n"
                       f"certificate = {files['page.crt']}\nkey = {files['page.key']}\n")
    expect(frame.set_password(password).returncode == 0, "set-password failed")
    return frame, Https(frame, port, files["ca.crt"])


def served_with_tls(frame, page, password, security_headers):
    """The check: the page over HTTPS; returns its summary line."""
    port = page.port
    form = {"Content-Type": "application/x-www-form-urlencoded"}

    status, headers, body, version = page.request("GET", "/login")
    expect(status == 200 and b"<form" in body, f"GET /login over HTTPS answered {status}")
    expect(version in ("TLSv1.2", "TLSv1.3"), f"the page spoke {version}")
    security_headers(headers, "GET /login over HTTPS")

    # Plain HTTP serves nothing: the same path over HTTPS, and no session.
    status, headers, _ = frame.request("GET", "/photos?page=2")
    expect(status == 302 and headers.get("location") == f"https://127.0.0.1:{port}/photos?page=2",
           f"GET /photos over HTTP answered {status} {headers.get('location')!r}")
    security_headers(headers, "the redirect to HTTPS")
    status, headers, _ = frame.request("POST", "/login", body=urllib.parse.urlencode({"password": password}),
                                       headers=form)
    expect(status == 302 and "set-cookie" not in headers, f"signing in over plain HTTP answered {status} {headers}")

    status, headers, _, _ = page.request("POST", "/login", body=urllib.parse.urlencode({"password": password}),
                                         headers=form)
    expect(status == 303, f"signing in over HTTPS answered {status}")
    attributes = [a.strip().lower() for a in headers.get("set-cookie", "").split(";")]
    expect({"secure", "httponly", "samesite=strict"} <= set(attributes), f"the session cookie over HTTPS: {attributes}")
    cookie = headers["set-cookie"].split(";")[0]

    # Over HTTPS, the page's http:// origin is another site's.
    before = frame.daemon.ask("status")["index"]
    status, _, _, _ = page.request("POST", "/drive/next", body=b"", cookie=cookie, origin=f"http://127.0.0.1:{port}")
    expect(status == 403, f"POST /drive/next from the http:// origin answered {status}")
    expect(frame.daemon.ask("status")["index"] == before, "a request from the http:// origin moved the frame")
    status, _, _, _ = page.request("POST", "/drive/next", body=b"", cookie=cookie, headers={"Accept": "application/json"})
    expect(status == 200, f"POST /drive/next over HTTPS answered {status}")
    until("the frame at the next picture", lambda: frame.daemon.ask("status")["index"] != before, timeout=10)

    # The live view over wss://, from the page's https:// origin only.
    head, first = page.live(cookie, page.origin)
    expect(head.startswith(b"HTTP/1.1 101") and first[:1] == b"\x81", f"the live view over TLS: {head[:60]!r} {first[:8]!r}")
    head, _ = page.live(cookie, f"http://127.0.0.1:{port}")
    expect(not head.startswith(b"HTTP/1.1 101"), "the live view opened for the http:// origin over TLS")

    # Plain HTTP to the TLS port is no request: closed, and the page serves on.
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        answer = s.recv(100)
    except ConnectionResetError:
        answer = b""
    s.close()
    expect(not answer.startswith(b"HTTP/"), f"plain HTTP on the TLS port was answered {answer[:40]!r}")
    expect(page.request("GET", "/login")[0] == 200, "the page stopped serving after plain HTTP on its TLS port")
    return f"{version}, cookie Secure, HTTP sent to HTTPS, http:// origin refused, wss live view"


def refused_at_start(suite, web_binary, make_ini):
    """The check: certificates that cannot serve stop carouseld-web's start
    with one line naming the file, exit status 2."""
    files = certificates(os.path.join(suite.folder, "tls-refused"))
    missing = os.path.join(suite.folder, "tls-refused", "missing.key")
    shared = os.path.join(suite.folder, "tls-refused", "shared.key")
    shutil.copy(files["page.key"], shared)
    os.chmod(shared, 0o640)
    # A certificate where the key goes, its owner's alone (as a key would be).
    not_a_key = os.path.join(suite.folder, "tls-refused", "certificate-as-key.pem")
    shutil.copy(files["page.crt"], not_a_key)
    os.chmod(not_a_key, 0o600)
    cases = [
        ("a key its group may read", f"certificate = {files['page.crt']}\nkey = {shared}\n",
         f"[web] key {shared} is readable by its group (mode 0640): a secret must be readable by its owner alone, the "
         f"user carouseld-web runs as; fix it with: chmod 0600 {shared}"),
        ("a key not the certificate's", f"certificate = {files['page.crt']}\nkey = {files['other.key']}\n",
         f"[web] key {files['other.key']} is not the key of certificate {files['page.crt']}"),
        ("a missing key", f"certificate = {files['page.crt']}\nkey = {missing}\n",
         f"[web] key {missing}: open: No such file or directory"),
        ("a certificate as the key", f"certificate = {files['page.crt']}\nkey = {not_a_key}\n",
         f"[web] key {not_a_key}: not a PEM private key"),
        ("a key as the certificate", f"certificate = {files['other.key']}\nkey = {files['page.key']}\n",
         f"[web] certificate {files['other.key']}: no PEM certificate in it"),
        ("a certificate without its key", f"certificate = {files['page.crt']}\n",
         "[web] certificate is set without key: HTTPS needs both (or neither, for HTTP)"),
    ]
    for what, lines, message in cases:
        ini = make_ini(what.replace(" ", "-").replace("'", ""), lines)
        run = subprocess.run([web_binary, "serve", "--config", ini], capture_output=True, text=True, timeout=30)
        err = run.stderr.strip().splitlines()
        expect(run.returncode == 2 and len(err) == 1 and message in err[0],
               f"{what}: exit {run.returncode}, {run.stderr.strip()[:300]!r}")
    return f"{len(cases)} refused, one line each"


def silent_peers(frame, page=None, count=64):
    """The check's half for one listener: `count` peers that connect and say
    nothing (or half a TLS handshake) are closed at the idle time-out, and a
    request made behind them is answered. Returns the seconds they were held."""
    peers = []
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", page.port if page else frame.port), timeout=30)
        if i % 2:
            # Half a ClientHello over TLS, half a request's head over HTTP.
            s.sendall(b"\x16\x03\x01\x00\xff\x01" if page else b"GET /login HT")
        peers.append(s)
    started = time.monotonic()
    if page:
        status = page.request("GET", "/login")[0]
    else:
        status = frame.request("GET", "/login")[0]
    expect(status == 200, f"the request behind {count} silent peers answered {status}")
    held = []
    for s in peers:
        try:
            data = s.recv(100)
        except (ConnectionResetError, socket.timeout):
            data = None
        expect(data == b"", f"a silent peer was not closed (it read {data!r})")
        held.append(time.monotonic() - started)
        s.close()
    return max(held)
