#!/usr/bin/env python3
"""carouseld-web against raw HTTP: the frame's page played by an attacker on
the LAN and by its owner, beside the real daemon on the offscreen display.

Every check talks HTTP/1.1 on a socket of its own (http.client, or raw bytes
where a browser would never send them) to `carouseld-web`, which asks the
daemon through its control socket. What the page refuses must leave the
album folder as it was (no file, no temporary file) and the frame where it
was; what it takes must reach the daemon's `list`.

Usage: web_e2e.py CAROUSELD CAROUSELD_WEB
"""
import html
import http.client
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

import web_https
from checks import IMAGES, REPO, CheckSuite, Failure, OffscreenDaemon, free_port, until

FIXTURES = os.path.join(REPO, "Tests/CarouselImagingTests/Fixtures")
PASSWORD = "a long enough password"
MAX_UPLOAD_MB = 4


class Frame:
    """The daemon and its page on a folder of their own."""

    def __init__(self, suite, name, album=None, idle_timeout=30, extra=""):
        self.suite = suite
        self.folder = os.path.join(suite.folder, name)
        self.album = album or os.path.join(self.folder, "album")
        self.state = os.path.join(self.folder, "web-state")
        os.makedirs(self.album, exist_ok=True)
        os.makedirs(self.state)
        for picture in ("01-mountains.jpg", "02-sunset.jpg"):
            shutil.copy(os.path.join(IMAGES, picture), self.album)
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.ini = os.path.join(self.folder, "carouseld.ini")
        with open(self.ini, "w") as f:
            f.write(f"[images]\npath = {self.album}\n[control]\nsocket = {self.folder}/control.sock\n"
                    f"settings = {self.folder}/settings.ini\n"
                    f"[autoplay]\nenabled = false\n[video]\nenabled = true\n"
                    f"[web]\nlisten = 127.0.0.1:{self.port}\nstate = {self.state}\nmax_upload_mb = {MAX_UPLOAD_MB}\n" + extra)
        self.daemon = OffscreenDaemon(suite.binary, self.ini, self.folder, os.path.join(self.folder, "control.sock"),
                                      "first frame on screen", "the daemon's first frame")
        suite.cleanup_frames.append(self)
        self.web_log = open(os.path.join(self.folder, "web.log"), "wb")
        self.idle_timeout = idle_timeout
        self.web = subprocess.Popen([suite.web, "--config", self.ini, "--idle-timeout", str(idle_timeout)],
                                    stdout=self.web_log, stderr=subprocess.STDOUT)
        until("carouseld-web's port", lambda: self.log_says("serving the page"), timeout=30)

    def restart_web(self):
        self.web.terminate()
        self.web.wait(10)
        self.web_log = open(os.path.join(self.folder, "web.log"), "ab")
        self.web = subprocess.Popen([self.suite.web, "--config", self.ini, "--idle-timeout", str(self.idle_timeout)],
                                    stdout=self.web_log, stderr=subprocess.STDOUT)
        until("carouseld-web's port again", lambda: self.log_says("serving the page") and self.answers(), timeout=30)

    def answers(self):
        try:
            return self.request("GET", "/login")[0] == 200
        except OSError:
            return False

    def restart_daemon(self):
        self.daemon.stop()
        self.daemon = OffscreenDaemon(self.suite.binary, self.ini, self.folder, os.path.join(self.folder, "control.sock"),
                                      "first frame on screen", "the daemon's first frame")

    def log_says(self, text):
        with open(os.path.join(self.folder, "web.log"), "rb") as f:
            return text in f.read().decode(errors="replace")

    def stop(self):
        if self.web.poll() is None:
            self.web.terminate()
            try:
                self.web.wait(10)
            except subprocess.TimeoutExpired:
                self.web.kill()
                self.web.wait()
        self.daemon.stop()

    def set_password(self, password=PASSWORD):
        return subprocess.run([self.suite.web, "set-password", "--config", self.ini], input=password + "\n",
                              capture_output=True, text=True, timeout=60)

    # HTTP

    def request(self, method, path, body=None, headers=None, cookie=None, origin=True):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return web_https.send(c, self.origin, method, path, body, headers, cookie, origin)[:3]

    def login(self, password=PASSWORD):
        status, headers, _ = self.request("POST", "/login", body=urllib.parse.urlencode({"password": password}),
                                          headers={"Content-Type": "application/x-www-form-urlencoded"})
        if status != 303:
            raise Failure(f"signing in answered {status}")
        return headers["set-cookie"].split(";")[0]

    def upload(self, files, cookie, origin=True, accept_json=True):
        """files: [(filename, bytes)] as one multipart body."""
        boundary = "----carouseld-test-boundary"
        body = b""
        for name, data in files:
            body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
                     f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
        body += f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if accept_json:
            headers["Accept"] = "application/json"
        return self.request("POST", "/photos", body=body, headers=headers, cookie=cookie, origin=origin)

    def album_files(self):
        return sorted(os.listdir(self.album))

    def listed(self):
        return [os.path.basename(p) for p in self.daemon.ask("list")["images"]]

    def listed_paths(self):
        return self.daemon.ask("list")["images"]


def picture(name):
    with open(os.path.join(IMAGES, name), "rb") as f:
        return f.read()


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def clip(folder):
    path = os.path.join(folder, "clip.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "1",
                    "-pix_fmt", "yuv420p", "-c:v", "libx264", path], check=True, timeout=120)
    with open(path, "rb") as f:
        return f.read()


def open_live(frame, cookie, origin=True):
    """A WebSocket on /live as a page opens it (`origin` True: the page's
    own; None: no Origin; `cookie` None: no Cookie); returns the socket and
    the response's head."""
    s = socket.create_connection(("127.0.0.1", frame.port), timeout=10)
    return s, web_https.ask_to_upgrade(s, frame.port, frame.origin if origin is True else origin, cookie)


def expect(condition, what):
    if not condition:
        raise Failure(what)


def security_headers(headers, what):
    csp = headers.get("content-security-policy", "")
    expect("default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp,
           f"{what}: no strict Content-Security-Policy ({csp!r})")
    expect(headers.get("x-content-type-options") == "nosniff", f"{what}: no X-Content-Type-Options")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    suite = CheckSuite(os.path.abspath(sys.argv[1]), "carouseld-web-e2e-")
    suite.web = os.path.abspath(sys.argv[2])
    suite.cleanup_frames = []
    frame = Frame(suite, "frame", idle_timeout=3)
    state = {}

    def no_password_yet():
        status, headers, body = frame.request("GET", "/login")
        expect(status == 200 and b"set-password" in body, "the sign-in page does not say how to set a password")
        status, _, _ = frame.request("POST", "/login", body="password=anything+at+all",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        expect(status == 401, f"signing in with no password set answered {status}")
        short = frame.set_password("short")
        expect(short.returncode != 0 and "at least 8" in short.stderr, f"a short password was taken: {short.stderr}")
        expect(not os.path.exists(os.path.join(frame.state, "owner.bcrypt")), "a refused password left a file")
        made = frame.set_password()
        expect(made.returncode == 0, f"set-password failed: {made.stderr}")
        stored = open(os.path.join(frame.state, "owner.bcrypt")).read()
        expect(stored.startswith("$2") and PASSWORD not in stored, "the password is not stored as a bcrypt hash")
        expect(os.stat(os.path.join(frame.state, "owner.bcrypt")).st_mode & 0o077 == 0, "the hash is readable by others")
        return "set-password: hash 0600; refused short"

    def signed_out_gets_nothing():
        before = frame.daemon.ask("status")["index"]
        album = frame.album_files()
        results = []
        for method, path in (("GET", "/now"), ("GET", "/photos"), ("GET", "/now.png"), ("POST", "/drive/next"),
                             ("POST", "/drive/pause"), ("POST", "/photos")):
            body = b"" if method == "POST" else None
            status, headers, _ = frame.request(method, path, body=body)
            security_headers(headers, f"{method} {path} signed out")
            if method == "GET" and path != "/now.png":
                expect(status == 303 and headers.get("location") == "/login", f"{method} {path} signed out: {status}")
            else:
                expect(status == 401, f"{method} {path} signed out answered {status}")
            results.append(status)
        status, _, _ = frame.upload([("x.jpg", picture("03-portrait.jpg"))], cookie=None)
        expect(status == 401, f"an upload signed out answered {status}")
        expect(frame.daemon.ask("status")["index"] == before, "a signed-out request moved the frame")
        expect(frame.album_files() == album, "a signed-out request wrote into the album")
        return f"{len(results) + 1} requests refused"

    def sign_in():
        status, _, body = frame.request("POST", "/login", body="password=not+the+password",
                                        headers={"Content-Type": "application/x-www-form-urlencoded"})
        expect(status == 401 and b"not the password" in body, f"a wrong password answered {status}")
        status, headers, _ = frame.request("POST", "/login", body=urllib.parse.urlencode({"password": PASSWORD}),
                                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        expect(status == 303 and headers.get("location") == "/now", f"the right password answered {status}")
        cookie = headers.get("set-cookie", "")
        attributes = [a.strip().lower() for a in cookie.split(";")]
        expect("httponly" in attributes and "samesite=strict" in attributes, f"the session cookie is {cookie!r}")
        state["cookie"] = cookie.split(";")[0]
        status, headers, body = frame.request("GET", "/now", cookie=state["cookie"])
        expect(status == 200 and b"Picture 1 of 2" in body, f"the Now page signed in: {status} {body[:200]!r}")
        security_headers(headers, "GET /now")
        # A planted session id is worth nothing: signing in gives a new one.
        status, headers, _ = frame.request("POST", "/login", body=urllib.parse.urlencode({"password": PASSWORD}),
                                           headers={"Content-Type": "application/x-www-form-urlencoded"},
                                           cookie="carouseld_session=planted-by-an-attacker")
        expect("planted-by-an-attacker" not in headers.get("set-cookie", ""), "signing in kept a planted session id")
        return "cookie HttpOnly, SameSite=Strict"

    def foreign_origin_refused():
        cookie = state["cookie"]
        before = frame.daemon.ask("status")["index"]
        album = frame.album_files()
        for origin in ("http://evil.example", f"http://127.0.0.1:{frame.port + 1}", "null", None):
            status, headers, _ = frame.request("POST", "/drive/next", body=b"", cookie=cookie, origin=origin or False)
            expect(status == 403, f"POST /drive/next from origin {origin!r} answered {status}")
            security_headers(headers, f"a refusal of origin {origin!r}")
            status, _, _ = frame.upload([("x.jpg", picture("03-portrait.jpg"))], cookie=cookie, origin=origin or False)
            expect(status == 403, f"an upload from origin {origin!r} answered {status}")
        status, _, _ = frame.request("POST", "/logout", body=b"", cookie=cookie, origin="http://evil.example")
        expect(status == 403, "a cross-site sign-out was taken")
        expect(frame.daemon.ask("status")["index"] == before, "a cross-site request moved the frame")
        expect(frame.album_files() == album, "a cross-site request wrote into the album")
        return "4 origins (another site, another port, null, none) x 2 actions"

    def drive_the_frame():
        cookie = state["cookie"]
        status, _, body = frame.request("POST", "/drive/next", body=b"", cookie=cookie, headers={"Accept": "application/json"})
        expect(status == 200 and json.loads(body)["ok"], f"next answered {status} {body!r}")
        until("the frame at picture 2", lambda: frame.daemon.ask("status")["index"] == 1, timeout=10)
        status, headers, _ = frame.request("POST", "/drive/prev", body=b"", cookie=cookie)
        expect(status == 303 and headers.get("location") == "/now", f"prev as a form answered {status}")
        until("the frame back at picture 1", lambda: frame.daemon.ask("status")["index"] == 0, timeout=10)
        status, headers, png = frame.request("GET", "/now.png", cookie=cookie)
        expect(status == 200 and headers.get("content-type") == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n",
               f"/now.png answered {status} {headers.get('content-type')}")
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        expect((width, height) == (320, 200), f"the screenshot is {width}x{height}, the display 320x200")
        status, _, _ = frame.request("POST", "/drive/anything", body=b"", cookie=cookie)
        expect(status == 404, f"an unknown action answered {status}")
        return f"next, prev; the screenshot {width}x{height}, {len(png)} bytes"

    def settings_page():
        cookie = state["cookie"]
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        status, _, body = frame.request("GET", "/settings", cookie=cookie)
        page = body.decode()
        shipped = open(os.path.join(REPO, "etc/carouseld/carouseld.ini")).read()
        keys = re.findall(r"^[a-z_0-9]+ =", shipped, re.M)  # every key, at its default
        shown = page.count('class="key"')
        expect(status == 200 and shown == len(keys), f"the Settings page shows {shown} keys, the shipped INI {len(keys)}")
        expect('id="v-autoplay.interval"' in page, "autoplay.interval is not editable")
        expect('id="v-images.path"' not in page and "by the board's administrator" in page,
               "images.path (administer) is editable")
        # A change: applied at once, kept in the settings file.
        status, headers, _ = frame.request("POST", "/settings", body="key=autoplay.interval&value=9", headers=form,
                                           cookie=cookie)
        expect(status == 303, f"saving the interval answered {status}")
        expect(frame.daemon.ask("status")["autoplay"]["interval"] == 9, "the interval did not reach the daemon")
        kept = open(os.path.join(frame.folder, "settings.ini")).read()
        expect("interval = 9" in kept, f"the settings file holds {kept!r}")
        with open(frame.ini) as f:
            expect("interval" not in f.read(), "carouseld.ini was rewritten")
        # A bad value: refused with check-config's own words, nothing changed.
        status, _, body = frame.request("POST", "/settings", body="key=autoplay.interval&value=soon", headers=form,
                                        cookie=cookie)
        bad_ini = os.path.join(frame.folder, "bad.ini")
        with open(bad_ini, "w") as f:
            f.write("[autoplay]\ninterval = soon\n")
        checked = subprocess.run([suite.binary, "check-config", bad_ini], capture_output=True, text=True)
        words = checked.stderr.strip().split(": ", 1)[1]
        expect(status == 422 and words in html.unescape(body.decode()), f"a bad value answered {status}; "
               f"check-config says {words!r}")
        expect(frame.daemon.ask("status")["autoplay"]["interval"] == 9, "a refused value changed the interval")
        # A key past the web's grant: refused by the page and the daemon, nothing written.
        status, _, body = frame.request("POST", "/settings", body="key=images.path&value=/etc", headers=form, cookie=cookie)
        expect(status == 422 and b"not granted to the web page" in body, f"images.path answered {status}")
        expect("images" not in open(os.path.join(frame.folder, "settings.ini")).read(), "images.path was kept")
        # It outlives a restart, and where it comes from says so.
        frame.restart_daemon()
        expect(frame.daemon.ask("status")["autoplay"]["interval"] == 9, "the kept interval did not outlive a restart")
        shown = subprocess.run([suite.binary, "check-config", frame.ini], capture_output=True, text=True).stdout
        expect(f"autoplay.interval = 9  ({frame.folder}/settings.ini:" in shown, f"check-config says {shown!r}")
        status, _, body = frame.request("GET", "/settings", cookie=cookie)
        expect("kept on this frame" in body.decode(), "the page does not say the value is kept")
        # Reset: the value of carouseld.ini (here the default, 3) again.
        status, _, _ = frame.request("POST", "/settings/reset", body="key=autoplay.interval", headers=form, cookie=cookie)
        expect(status == 303 and frame.daemon.ask("status")["autoplay"]["interval"] == 3, f"reset answered {status}")
        return f"{len(keys)} keys shown; interval 9 kept across a restart, 'soon' refused as check-config words it, " \
               f"images.path refused, reset to 3"

    def status_page():
        status, _, body = frame.request("GET", "/status", cookie=state["cookie"])
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body.decode())).split())
        version = frame.daemon.ask("version")["version"]
        st = os.statvfs(frame.album)
        expect(status == 200 and f"carouseld {version}" in text, f"no daemon version on the Status page: {text[:300]}")
        expect("backend offscreen 320x200" in text, "the display is not on the Status page")
        expect(f"free of" in text and frame.album in text, "the disk space is not on the Status page")
        expect("MQTT off" in text and "Sync off" in text, "MQTT and the sync are not on the Status page")
        return f"carouseld {version}; disk {st.f_bavail * st.f_frsize >> 30} GiB free here"

    def live_view_guarded():
        cookie = state["cookie"]

        refused = []
        for origin, c, what in ((frame.origin, None, "no session"), ("http://evil.example", cookie, "another origin"),
                                (None, cookie, "no origin"), (frame.origin, "carouseld_session=made-up", "a made-up session")):
            s, head = open_live(frame, c, origin)
            s.close()
            expect(not head.startswith(b"HTTP/1.1 101"), f"the live view was opened with {what}")
            refused.append(f"{what} {head.split(b' ', 2)[1].decode() if head else 'closed'}")
        s, head = open_live(frame, cookie)
        expect(head.startswith(b"HTTP/1.1 101"), f"the live view refused its page: {head[:80]!r}")
        rest = head.split(b"\r\n\r\n", 1)[1]
        while len(rest) < 2 or len(rest) < 2 + (rest[1] & 0x7F):
            rest += s.recv(4096)
        length = rest[1] & 0x7F
        message = json.loads(rest[2:2 + length])
        expect(rest[0] == 0x81 and "index" in message and "generation" in message, f"the first message is {message}")
        s.close()
        return f"refused: {', '.join(refused)}; its page gets the state: {message}"

    def upload_pictures_and_a_clip():
        cookie = state["cookie"]
        files = [("portrait.jpg", picture("03-portrait.jpg")), ("phone photo.HEIC", fixture("exif-6.heic")),
                 ("drawing.png", fixture("rgba.png") if os.path.exists(os.path.join(FIXTURES, "rgba.png"))
                  else picture("01-mountains.jpg")), ("clip.mp4", clip(frame.folder))]
        status, _, body = frame.upload(files, cookie)
        answer = json.loads(body)
        names = [f.get("name") for f in answer["files"]]
        expect(status == 200 and all(f["ok"] for f in answer["files"]), f"the upload answered {status}: {answer}")
        expect(names[1] == "phone_photo.heic", f"the HEIC was named {names[1]!r}")
        until("the uploads in the daemon's list", lambda: set(names) <= set(frame.listed()), timeout=20)
        expect(not [n for n in os.listdir(frame.album) if n.startswith(".")], "a temporary file stayed in the album")
        # The same names again: new names, nothing replaced.
        status, _, body = frame.upload([("portrait.jpg", picture("02-sunset.jpg"))], cookie)
        again = json.loads(body)["files"][0]
        expect(again["ok"] and again["name"] == "portrait-2.jpg", f"a second portrait.jpg became {again}")
        with open(os.path.join(frame.album, "portrait.jpg"), "rb") as f:
            expect(f.read() == picture("03-portrait.jpg"), "an upload replaced a file of the same name")
        until("portrait-2.jpg in the daemon's list", lambda: "portrait-2.jpg" in frame.listed(), timeout=20)
        return f"{', '.join(names)} in list; a second portrait.jpg became portrait-2.jpg"

    def hostile_uploads():
        cookie = state["cookie"]
        parent = os.path.dirname(frame.album)
        before_parent = sorted(os.listdir(parent))
        # A path in the name: only its last part is kept, inside the album.
        status, _, body = frame.upload([("../../x.jpg", picture("03-portrait.jpg"))], cookie)
        answer = json.loads(body)["files"][0]
        expect(answer["ok"] and answer["name"] == "x.jpg", f"../../x.jpg became {answer}")
        expect(sorted(os.listdir(parent)) == before_parent, "an upload named ../../x.jpg wrote outside the album")
        expect(not os.path.exists(os.path.join(os.path.dirname(parent), "x.jpg")), "../../x.jpg escaped the album")
        refusals = []
        album = frame.album_files()
        for name, data, code, words in (
            ("notes.jpg", b"just some text, not a picture\n" * 10, 422, "not a picture"),
            ("big.jpg", b"\xff\xd8\xff" + b"\0" * (MAX_UPLOAD_MB * 1048576 + 1), 413, "larger than"),
            ("tool.exe", picture("03-portrait.jpg"), 415, "not a picture or clip"),
            ("noextension", picture("03-portrait.jpg"), 415, "extension"),
            ("empty.png", b"", 400, "empty"),
            ("fake.mp4", b"\0\0\0\x18ftypmp42" + os.urandom(4096), 422, "not a clip"),
        ):
            status, headers, body = frame.upload([(name, data)], cookie)
            text = body.decode(errors="replace")
            expect(status == code and words in text, f"{name}: answered {status} {text[:300]}")
            security_headers(headers, f"the refusal of {name}")
            expect(frame.album_files() == album, f"{name}: something was left in the album: "
                                                 f"{sorted(set(frame.album_files()) - set(album))}")
            refusals.append(f"{name} {status}")
        return "; ".join(refusals)

    def endless_body():
        cookie = state["cookie"]
        album = frame.album_files()
        boundary = "endless"
        s = socket.create_connection(("127.0.0.1", frame.port), timeout=30)
        head = (f"POST /photos HTTP/1.1\r\nHost: 127.0.0.1:{frame.port}\r\nOrigin: {frame.origin}\r\nCookie: {cookie}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\nTransfer-Encoding: chunked\r\n\r\n")
        part = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"never.jpg\"\r\n\r\n").encode()
        chunk = part + picture("03-portrait.jpg")[:1000]
        s.sendall(head.encode() + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        until("the part's temporary file", lambda: any(n.startswith(".") for n in os.listdir(frame.album)), timeout=10)
        # Then nothing more: the page closes the connection at its idle
        # time-out (3 s here) and keeps nothing.
        s.settimeout(60)
        closed = b""
        try:
            while True:
                data = s.recv(4096)
                if not data:
                    break
                closed += data
        except ConnectionResetError:
            pass
        s.close()
        until("the temporary file removed", lambda: frame.album_files() == album, timeout=10)
        # And a body of endless preamble, sent as fast as it goes: answered
        # 400 once 1 MiB of it is in, whatever comes after.
        s = socket.create_connection(("127.0.0.1", frame.port), timeout=30)
        s.sendall(head.encode())
        sent = 0
        answer = b""
        while sent < 64 << 20 and not answer:
            block = b"x" * 65536
            try:
                s.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(block)
            ready, _, _ = select.select([s], [], [], 0)
            if ready:
                answer = s.recv(4096)
        if not answer:
            s.settimeout(10)
            try:
                answer = s.recv(4096)
            except (ConnectionResetError, socket.timeout):
                pass
        s.close()
        expect(answer.startswith(b"HTTP/1.1 400") and b"besides its files" in answer,
               f"an endless preamble was answered {answer[:120]!r} after {sent >> 20} MiB")
        expect(sent < 32 << 20, f"the refusal came only after {sent >> 20} MiB")
        expect(frame.album_files() == album, "an endless body left a file")
        # What a page killed mid-upload leaves is removed at its next start.
        with open(os.path.join(frame.album, ".carouseld-web-left.part"), "wb") as f:
            f.write(b"half a picture")
        frame.restart_web()
        expect(not os.path.exists(os.path.join(frame.album, ".carouseld-web-left.part")), "a left upload stayed")
        expect(frame.log_says("removed 1 upload left unfinished"), "no line about the left upload")
        # Sessions live in the page's memory: its restart signed the owner out.
        state["cookie"] = frame.login()
        return f"a silent body closed at the idle time-out, nothing kept; an endless preamble answered 400 " \
               f"after {sent >> 10} KiB sent"

    def names_escaped():
        cookie = state["cookie"]
        evil = "<script>alert(1)<script>.jpg"  # a file name has no slash
        shutil.copy(os.path.join(IMAGES, "01-mountains.jpg"), os.path.join(frame.album, evil))
        until("the file in the daemon's list", lambda: evil in frame.listed(), timeout=20)
        status, _, body = frame.request("GET", "/photos", cookie=cookie)
        text = body.decode()
        expect(status == 200 and "&lt;script&gt;alert(1)&lt;script&gt;.jpg" in text, "the name is not shown escaped")
        expect("<script>alert" not in text, "the name is shown as markup")
        return "shown as &lt;script&gt;..."

    def full_disk():
        small = os.path.join(suite.folder, "small")
        os.makedirs(small)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", small], capture_output=True, text=True)
        if mounted.returncode != 0:
            raise Failure(f"cannot mount a 2 MiB tmpfs for the full disk: {mounted.stderr.strip()}")
        disk = None
        try:
            disk = Frame(suite, "disk", album=small)
            made = disk.set_password()
            expect(made.returncode == 0, f"set-password: {made.stderr}")
            cookie = disk.login()
            before = sorted(os.listdir(small))
            status, _, body = disk.upload([("huge.jpg", b"\xff\xd8\xff" + b"\0" * (3 << 20))], cookie)
            text = body.decode(errors="replace")
            expect(status == 507 and "disk is full" in text, f"a full disk answered {status} {text[:200]}")
            expect(sorted(os.listdir(small)) == before, f"a full disk left {sorted(set(os.listdir(small)) - set(before))}")
            status, _, body = disk.upload([("fits.jpg", picture("03-portrait.jpg"))], cookie)
            expect(status == 200 and json.loads(body)["files"][0]["ok"], "after a full disk, a small file was refused")
            return "507 'the frame's disk is full', nothing left; the next file taken"
        finally:
            if disk:
                disk.stop()
            subprocess.run(["umount", small], capture_output=True)

    def daemon_grants_the_web_user():
        # The daemon, not only the page, holds the web's user to the web's
        # grant: a page taken over cannot reach past the frame.
        granted = Frame(suite, "granted", extra="user = nobody\n[control]\nmode = 0666\n")
        try:
            os.chmod(suite.folder, 0o711)
            os.chmod(granted.folder, 0o711)
            sock = os.path.join(granted.folder, "control.sock")
            script = ("import json, socket, sys\n"
                      "for line in sys.argv[2:]:\n"
                      "    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.sendall(line.encode() + b'\\n')\n"
                      "    print(c.makefile().readline().strip())\n")
            lines = ["status", "next", "set autoplay.interval 7", f"set images.path {granted.folder}",
                     "screenshot /tmp/carouseld-web-grant.png", "set control.socket /tmp/x.sock"]
            r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c",
                                script, sock] + lines, capture_output=True, text=True, timeout=60)
            expect(r.returncode == 0, f"the client as nobody failed: {r.stderr}")
            replies = [json.loads(l) for l in r.stdout.splitlines()]
            expect([x["ok"] for x in replies] == [True, True, True, False, False, False],
                   f"nobody's replies: {replies}")
            for reply in replies[3:]:
                expect("not granted to the web page" in reply["error"], f"a refusal does not name the grant: {reply}")
            expect(not os.path.exists("/tmp/carouseld-web-grant.png"), "the web's user wrote a screenshot where it said")
            as_root = granted.daemon.ask("set autoplay.interval 9")
            expect(as_root["ok"], f"root was refused: {as_root}")
            return f"as nobody: status, next, set autoplay.interval taken; images.path, screenshot PATH, " \
                   f"control.socket refused ('{replies[3]['error'][:60]}...')"
        finally:
            granted.stop()

    def thumbnails():
        cookie = state["cookie"]
        status, headers, webp = frame.request("GET", "/thumbnails/01-mountains.jpg", cookie=cookie)
        expect(status == 200 and headers["content-type"] == "image/webp" and webp[:4] == b"RIFF" and webp[8:12] == b"WEBP",
               f"a thumbnail answered {status} {headers.get('content-type')}")
        expect(len(webp) < 20000, f"a thumbnail is {len(webp)} bytes")
        cached = os.listdir(os.path.join(frame.state, "thumbnails"))
        expect(len(cached) == 1, f"the thumbnail was not kept: {cached}")
        again = frame.request("GET", "/thumbnails/01-mountains.jpg", cookie=cookie)[2]
        expect(again == webp and os.listdir(os.path.join(frame.state, "thumbnails")) == cached, "made again")
        status, _, clip_webp = frame.request("GET", "/thumbnails/clip.mp4", cookie=cookie)
        expect(status == 200 and clip_webp[:4] == b"RIFF", f"a clip's thumbnail answered {status}")
        for name, code in (("..%2Fweb.log", 404), ("nothing.jpg", 404)):
            status, _, _ = frame.request("GET", f"/thumbnails/{name}", cookie=cookie)
            expect(status == code, f"/thumbnails/{name} answered {status}")
        with open(os.path.join(frame.album, "notes.jpg"), "wb") as f:
            f.write(b"text, not a picture\n")
        status, _, _ = frame.request("GET", "/thumbnails/notes.jpg", cookie=cookie)
        os.unlink(os.path.join(frame.album, "notes.jpg"))
        expect(status == 404, f"a thumbnail of text answered {status}")
        status, _, _ = frame.request("GET", "/thumbnails/01-mountains.jpg")
        expect(status == 303, f"a thumbnail signed out answered {status}")
        page = frame.request("GET", "/photos", cookie=cookie)[2].decode()
        expect('src="/thumbnails/01-mountains.jpg"' in page, "the Photos page shows no thumbnails")
        # A name the page did not make (a space, an accent): its link is percent-encoded, and it works.
        odd = "my photo é.jpg"
        shutil.copy(os.path.join(IMAGES, "02-sunset.jpg"), os.path.join(frame.album, odd))
        until("the odd name in the daemon's list", lambda: odd in frame.listed(), timeout=20)
        link = urllib.parse.quote(odd)
        expect(f'src="/thumbnails/{link}"' in frame.request("GET", "/photos", cookie=cookie)[2].decode(),
               "the odd name's thumbnail is not linked percent-encoded")
        status, _, odd_webp = frame.request("GET", f"/thumbnails/{link}", cookie=cookie)
        os.unlink(os.path.join(frame.album, odd))
        expect(status == 200 and odd_webp[:4] == b"RIFF", f"the odd name's thumbnail answered {status}")
        return f"WebP {len(webp)} bytes, made once; a clip's too; paths, text and strangers refused"

    def hide_and_unhide():
        cookie = state["cookie"]
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        before = frame.daemon.ask("list")
        status = frame.daemon.ask("status")
        on_screen = status["image"]
        code, headers, _ = frame.request("POST", "/drive/hide", body=b"", cookie=cookie)
        expect(code == 303, f"hiding answered {code}")
        after = frame.daemon.ask("list")
        expect(after["count"] == before["count"] - 1 and on_screen not in after["images"] and after["hidden"] == [on_screen],
               f"after hide: {after}")
        expect(os.path.exists(on_screen), "hiding removed the file")
        page = frame.request("GET", "/photos", cookie=cookie)[2].decode()
        name = os.path.basename(on_screen)
        expect(f'aria-label="Unhide {name}"' in page, "the Photos page offers no unhide")
        frame.restart_daemon()
        expect(on_screen not in frame.daemon.ask("list")["images"], "a hidden picture came back after a restart")
        code, _, _ = frame.request("POST", "/photos/unhide", body=urllib.parse.urlencode({"name": on_screen}),
                                   headers=form, cookie=cookie)
        expect(code == 303 and on_screen in frame.daemon.ask("list")["images"], f"unhide answered {code}")
        expect(frame.daemon.ask("list")["hidden"] == [], "still hidden")
        return f"{name} hidden (kept across a restart, the file untouched), then back"

    def first_run_from_the_code():
        fresh = Frame(suite, "fresh")
        try:
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            status, _, body = fresh.request("GET", "/login")
            expect(status == 200 and b"/setup/code" in body, "the first page does not offer a setup code")
            status, headers, _ = fresh.request("POST", "/setup/code", body=b"", headers=form)
            expect(status == 303 and headers["location"] == "/setup", f"asking for a setup code answered {status}")
            shown = fresh.daemon.ask("status")["pairing"]
            expect(set(shown) == {"setup"} and "code" not in shown["setup"], f"status says {shown}")
            # The person at the frame reads the code off its screen: here, as root on the socket, which gets
            # the code it asks for (a new one: the one on the screen now).
            code = fresh.daemon.ask("pair setup")["code"]
            page = fresh.request("GET", "/setup")[2].decode()
            expect(code not in page, "the setup page shows the code")
            wrong = f"{(int(code) + 1) % 1000000:06d}"
            status, _, body = fresh.request("POST", "/setup", headers=form, body=urllib.parse.urlencode(
                {"code": wrong, "password": PASSWORD, "again": PASSWORD}))
            expect(status == 401 and b"Wrong code" in body, f"a wrong code answered {status}")
            expect(not os.path.exists(os.path.join(fresh.state, "owner.bcrypt")), "a wrong code set a password")
            status, _, _ = fresh.request("POST", "/setup", headers=form, body=urllib.parse.urlencode(
                {"code": code, "password": PASSWORD, "again": PASSWORD + "x"}))
            expect(status == 422, f"two different passwords answered {status}")
            status, headers, _ = fresh.request("POST", "/setup", headers=form, body=urllib.parse.urlencode(
                {"code": code, "password": PASSWORD, "again": PASSWORD}))
            expect(status == 303 and "carouseld_session=" in headers.get("set-cookie", ""), f"the right code answered {status}")
            expect(fresh.daemon.ask("status")["pairing"] is None, "the code is still on the screen")
            expect(fresh.login() is not None, "the password chosen does not sign in")
            status, _, _ = fresh.request("POST", "/setup", headers=form, body=urllib.parse.urlencode(
                {"code": code, "password": "another password", "again": "another password"}))
            expect(status == 409, f"a second setup answered {status}")
            return "a code on the screen (not on the page, not in status), a wrong one refused, the right one once"
        finally:
            fresh.stop()

    def guests_pair_and_are_revoked():
        owner = state["cookie"]
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        status, _, body = frame.request("POST", "/guests/pair", body=b"", headers=form, cookie=owner)
        m = re.search(rb'id="guest-code">(\d{6})<', body)
        expect(status == 200 and m, f"pairing a guest answered {status}")
        code = m.group(1).decode()
        expect(frame.daemon.ask("status")["pairing"].keys() == {"guest"}, "the code is not on the screen")
        # A wrong code first, then the right one.
        status, _, _ = frame.request("POST", "/pair", headers=form, body="code=000000&name=x" if code != "000000" else
                                     "code=000001&name=x")
        expect(status == 401, f"a wrong code answered {status}")
        status, headers, _ = frame.request("POST", "/pair", headers=form, body=urllib.parse.urlencode(
            {"code": code, "name": "Anna's <b>phone</b>"}))
        expect(status == 303, f"the right code answered {status}")
        guest = headers["set-cookie"].split(";")[0]
        status, _, _ = frame.request("POST", "/pair", headers=form, body=urllib.parse.urlencode({"code": code, "name": "y"}))
        expect(status == 401, "a code was used twice")
        # What a guest may do, and may not.
        expect(frame.request("GET", "/now", cookie=guest)[0] == 200, "a guest cannot see Now")
        before = frame.daemon.ask("status")["index"]
        expect(frame.request("POST", "/drive/next", body=b"", cookie=guest)[0] == 303, "a guest cannot drive")
        until("the guest's next", lambda: frame.daemon.ask("status")["index"] != before, timeout=10)
        for method, path, body in (("GET", "/settings", None), ("POST", "/settings", "key=autoplay.interval&value=4"),
                                   ("POST", "/drive/hide", ""), ("POST", "/photos/unhide", "name=x"),
                                   ("POST", "/guests/pair", ""), ("POST", "/guests/revoke", "id=x")):
            status, _, _ = frame.request(method, path, body=body, headers=form if body is not None else None, cookie=guest)
            expect(status == 403, f"a guest's {method} {path} answered {status}")
        status, _, body = frame.upload([("from-anna.jpg", picture("03-portrait.jpg"))], guest)
        expect(status == 200 and json.loads(body)["files"][0]["ok"], f"a guest's upload answered {status}")
        status, _, body = frame.request("GET", "/photos", cookie=guest)
        text = body.decode()
        expect('aria-label="Delete from-anna.jpg"' in text and 'aria-label="Delete 01-mountains.jpg"' not in text,
               "a guest is offered to delete what it did not add")
        status, _, _ = frame.request("POST", "/photos/delete", body="name=01-mountains.jpg", headers=form, cookie=guest)
        expect(status == 403 and os.path.exists(os.path.join(frame.album, "01-mountains.jpg")),
               f"a guest deleted the owner's picture ({status})")
        status, _, _ = frame.request("POST", "/photos/delete", body="name=../web.log", headers=form, cookie=owner)
        expect(status == 400 and os.path.exists(os.path.join(frame.folder, "web.log")), "a path was deleted")
        # The owner sees the guest, escaped, and revokes it.
        status, _, body = frame.request("GET", "/settings", cookie=owner)
        text = body.decode()
        expect("Anna&#39;s &lt;b&gt;phone&lt;/b&gt;" in text, "the guest's name is not shown escaped")
        gid = re.search(r'name="id" value="([a-z0-9]+)"', text).group(1)
        live, head = open_live(frame, guest)
        expect(head.startswith(b"HTTP/1.1 101"), f"the guest's live view was refused: {head[:60]!r}")
        status, _, _ = frame.request("POST", "/guests/revoke", body=f"id={gid}", headers=form, cookie=owner)
        expect(status == 303, f"revoking answered {status}")
        # Its open live view ends at the next change; a new one is refused.
        frame.request("POST", "/drive/next", body=b"", cookie=owner)
        live.settimeout(15)
        ended = False
        try:
            while True:
                data = live.recv(4096)
                if not data or b"\x88" in data[:1] or data[:1] == b"\x88":
                    ended = True
                    break
        except (socket.timeout, ConnectionResetError):
            ended = not isinstance(sys.exc_info()[1], socket.timeout)
        live.close()
        expect(ended, "a revoked guest's live view stayed open")
        again, head = open_live(frame, guest)
        again.close()
        expect(not head.startswith(b"HTTP/1.1 101"), "a revoked guest opened the live view")
        status, headers, _ = frame.request("GET", "/now", cookie=guest)
        expect(status == 303 and headers["location"] == "/login", f"a revoked guest's page answered {status}")
        status, _, _ = frame.upload([("after.jpg", picture("03-portrait.jpg"))], guest)
        expect(status == 401 and not os.path.exists(os.path.join(frame.album, "after.jpg")), "a revoked guest uploaded")
        expect(os.path.exists(os.path.join(frame.album, "from-anna.jpg")), "revoking took the guest's pictures")
        # Five wrong codes void one.
        code = frame.daemon.ask("pair")["code"]
        for n in range(5):
            frame.daemon.ask(f"pair redeem guest {(int(code) + 1 + n) % 1000000:06d}")
        voided = frame.daemon.ask(f"pair redeem guest {code}")
        expect(not voided["ok"] and "no guest code" in voided["error"], f"after 5 wrong codes: {voided}")
        return "paired (a wrong code refused, a code used once), drove, uploaded, refused settings and others' " \
               "pictures; revoked: refused, its pictures stay; 5 wrong codes void one"

    def login_rate_limited():
        limited = Frame(suite, "limited")
        made = limited.set_password()
        expect(made.returncode == 0, f"set-password: {made.stderr}")
        c = http.client.HTTPConnection("127.0.0.1", limited.port, timeout=30)
        counts = {}
        retry = None
        for n in range(1000):
            c.request("POST", "/login", body=f"password=guess{n:04d}",
                      headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": limited.origin})
            r = c.getresponse()
            r.read()
            counts[r.status] = counts.get(r.status, 0) + 1
            if r.status == 429:
                retry = r.getheader("Retry-After")
        c.close()
        expect(counts.get(401) == 5 and counts.get(429) == 995, f"1,000 wrong passwords were answered {counts}")
        expect(retry is not None and 1 <= int(retry) <= 60, f"Retry-After is {retry!r}")
        # Within the window even the right password waits: a guess is never checked.
        status, _, _ = limited.request("POST", "/login", body=urllib.parse.urlencode({"password": PASSWORD}),
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
        expect(status == 429, f"the right password within the window answered {status}")
        limited.stop()
        return f"{counts[401]} checked, {counts[429]} refused with Retry-After {retry}"

    def https_page():
        state["https"] = web_https.https_frame(suite, lambda name, idle, extra: Frame(suite, name, idle_timeout=idle,
                                                                                       extra=extra), PASSWORD)
        return web_https.served_with_tls(*state["https"], PASSWORD, security_headers)

    def https_refused_at_start():
        def make_ini(name, lines):
            folder = os.path.join(suite.folder, "refused-" + name)
            os.makedirs(folder)
            path = os.path.join(folder, "carouseld.ini")
            with open(path, "w") as f:
                f.write(f"[images]\npath = {folder}\n[control]\nsocket = {folder}/control.sock\n"
                        f"[web]\nlisten = 127.0.0.1:{free_port()}\nstate = {folder}\n" + lines)
            return path
        return web_https.refused_at_start(suite, suite.web, make_ini)

    def silent_peers():
        plain = web_https.silent_peers(frame)
        tls = web_https.silent_peers(*state["https"])
        return f"64 silent peers each over HTTP and HTTPS closed at the 3 s idle time-out ({plain:.1f} s, {tls:.1f} s)"

    try:
        suite.check("no owner's password yet: the page says how to set one; set-password keeps a bcrypt hash, 0600",
                    no_password_yet)
        suite.check("signed out, every page and action is refused (pages go to sign in), nothing moves or is written",
                    signed_out_gets_nothing)
        suite.check("signing in: a wrong password refused, the right one gives a new HttpOnly SameSite=Strict session",
                    sign_in)
        suite.check("a request from another origin (or none) is refused, signed in or not: nothing moves or is written",
                    foreign_origin_refused)
        suite.check("Now: next and prev drive the frame, /now.png is the frame's picture", drive_the_frame)
        suite.check("Settings: every key; a change applied and kept across a restart (check-config names the file), a bad "
                    "value refused in check-config's words, an administered key refused, reset", settings_page)
        suite.check("Status: versions, display, album, sync, MQTT, disk space", status_page)
        suite.check("the live view (WebSocket /live) opens for a signed-in page of this origin only, and says the state",
                    live_view_guarded)
        suite.check("uploads: a JPEG, a HEIC, a PNG and a clip in one request reach the daemon's list; names never replace",
                    upload_pictures_and_a_clip)
        suite.check("hostile uploads: ../../x.jpg stays in the album; text named .jpg, over the limit, .exe, no "
                    "extension, empty, a fake clip: each refused with nothing left", hostile_uploads)
        suite.check("a multipart body that never ends: a silent one closed at the idle time-out, an endless one refused; "
                    "nothing kept", endless_body)
        suite.check("a picture named <script>alert(1)<script>.jpg is shown escaped", names_escaped)
        suite.check("a full disk: one clear message, nothing left behind, the next file taken", full_disk)
        suite.check("the daemon gives [web] user's connections the web's grant: tune yes, paths and files no",
                    daemon_grants_the_web_user)
        suite.check("thumbnails: small WebP made once in a helper, a clip's first frame too; nothing else served",
                    thumbnails)
        suite.check("hide the picture on screen on this frame, kept across a restart; unhide from Photos", hide_and_unhide)
        suite.check("first run: a setup code on the frame's screen, then the owner's password chosen on the page",
                    first_run_from_the_code)
        suite.check("guests: paired with a code the frame shows, may add and drive but not configure nor delete others'; "
                    "revoked by the owner", guests_pair_and_are_revoked)
        suite.check("1,000 sign-in attempts: 5 checked, the rest refused (429, Retry-After) without being checked",
                    login_rate_limited)
        suite.check("HTTPS with [web] certificate and key: the test CA's certificate verified, the session cookie Secure, "
                    "plain HTTP sent to HTTPS with no session, an http:// origin refused, the live view over wss://",
                    https_page)
        suite.check("HTTPS that cannot serve (a key its group may read, a key not the certificate's, a missing key, a "
                    "certificate as the key, a key as the certificate, a certificate without its key) stops the start "
                    "with one line", https_refused_at_start)
        suite.check("64 peers that connect and say nothing, or half a request's head or of a TLS handshake, are closed at "
                    "the idle time-out, over HTTP and HTTPS; a request behind them is answered", silent_peers)
    finally:
        for f in suite.cleanup_frames:
            f.stop()
    shutil.rmtree(suite.folder, ignore_errors=True)
    for name, error in suite.failed:
        print(f"FAILED: {name}: {error}")
    print(f"web: {len(suite.passed)} passed, {len(suite.failed)} failed")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
