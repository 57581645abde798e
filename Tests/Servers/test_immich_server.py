#!/usr/bin/env python3
"""Self-test of immich_server.py: python3 Tests/Servers/test_immich_server.py

Builds a library of 3 JPEG fixtures, starts the server and talks to it with
urllib. Every JSON answer is also checked against immich-api-subset.json, so
the server cannot drift from the reference it enforces on clients.
Exits non-zero on any failure.
"""
import base64
import gzip
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the work tree
import immich_server  # noqa: E402  (for its schema checker)

FIXTURES = os.path.join(HERE, "..", "CarouselImagingTests", "Fixtures")
KEY = "test-key-123"
A1, A2, A3 = ("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222",
              "33333333-3333-4333-8333-333333333333")
ALB_TRIP, ALB_HOME = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
P_ANA, P_BOB = "bbbbbbbb-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
MEM = "cccccccc-0000-4000-8000-000000000001"
SPEC = json.load(open(os.path.join(HERE, "immich-api-subset.json")))
RESULTS = {"passed": 0, "failed": 0}


def expect(cond, what):
    RESULTS["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what)


def make_library(root):
    os.makedirs(os.path.join(root, "originals"))
    os.makedirs(os.path.join(root, "previews"))
    for src, dst in (("quadrants.jpg", "originals/quadrants.jpg"), ("large.jpg", "originals/large.jpg"),
                     ("meta-date.jpg", "originals/meta-date.jpg"), ("large-rotated.jpg", "previews/large.jpg")):
        shutil.copy(os.path.join(FIXTURES, src), os.path.join(root, dst))
    library = {
        "people": [{"id": P_ANA, "name": "Ana"}, {"id": P_BOB, "name": "Bob", "isHidden": True}],
        "assets": [
            {"id": A1, "type": "IMAGE", "file": "originals/quadrants.jpg", "originalFileName": "IMG_0001.jpg",
             "fileCreatedAt": "2023-07-01T09:00:00.000Z", "isFavorite": True, "people": [P_ANA],
             "exifInfo": {"description": "Beach", "dateTimeOriginal": "2023-07-01T09:00:00.000Z"}},
            {"id": A2, "type": "IMAGE", "file": "originals/large.jpg", "preview": "previews/large.jpg",
             "originalFileName": "IMG_0002.jpg", "fileCreatedAt": "2024-01-15T12:00:00.000Z",
             "people": [P_ANA, P_BOB]},
            {"id": A3, "type": "IMAGE", "file": "originals/meta-date.jpg", "originalFileName": "IMG_0003.jpg",
             "fileCreatedAt": "2024-06-30T18:30:00.000Z"},
        ],
        "albums": [{"id": ALB_TRIP, "albumName": "Trip", "assetIds": [A1, A2]},
                   {"id": ALB_HOME, "albumName": "Home", "assetIds": [A3], "shared": True}],
        "memories": [{"id": MEM, "memoryAt": "2024-07-01T00:00:00.000Z", "year": 2023, "assetIds": [A1]}],
    }
    with open(os.path.join(root, "library.json"), "w") as f:
        json.dump(library, f, indent=1)
    return library


class Client:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method, path, query=None, body=None, key=KEY, timeout=5, headers=None):
        url = self.base + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        if key:
            req.add_header("x-api-key", key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def json(self, method, path, query=None, body=None, key=KEY, schema=None):
        status, headers, raw = self.call(method, path, query, body, key)
        obj = json.loads(raw)
        if status == 200 and schema is not None:  # the server's own answers must match the reference
            problems = []
            immich_server.check(SPEC, schema, obj, "response", problems)
            expect(not problems, f"{method} {path} answer conforms to the subset {problems[:3]}")
        return status, obj

    def control(self, method, name, body=None):
        return self.json(method, "/_test/" + name, body=body, key=None)


def response_schema(path_template, method="GET"):
    op = next(o for o in SPEC["operations"] if o["path"] == path_template and o["method"] == method)
    return op["responses"]["200"]["schema"]


def start(library_dir, *extra):
    port_file = os.path.join(library_dir, "port")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "immich_server.py"), "--port", "0",
                             "--library", library_dir, "--api-key", KEY, "--port-file", port_file, *extra])
    for _ in range(100):
        if os.path.exists(port_file):
            return proc, Client(int(open(port_file).read()))
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not write its port file")


def main():
    tmp = tempfile.mkdtemp(prefix="immich-test-")
    try:
        for sub, extra, tests in (("plain", [], run), ("portable", ["--portable"], run_portable)):
            root = os.path.join(tmp, sub)
            library = make_library(root)
            proc, c = start(root, *extra)
            try:
                tests(c, root, library)
            finally:
                proc.terminate()
                proc.wait(5)
    finally:
        shutil.rmtree(tmp)
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(1 if RESULTS["failed"] else 0)


def run(c, tmp, library):
    # --- public endpoints and authentication
    s, body = c.json("GET", "/api/server/ping", key=None, schema=response_schema("/server/ping"))
    expect(s == 200 and body == {"res": "pong"}, "ping answers without a key")
    s, body = c.json("GET", "/api/server/version", key=None, schema=response_schema("/server/version"))
    expect(body == {"major": 2, "minor": 7, "patch": 5}, f"version is 2.7.5 {body}")
    s, body = c.json("GET", "/api/users/me", key=None)
    expect(s == 401 and body["message"] == "Authentication required" and body["error"] == "Unauthorized"
           and body["statusCode"] == 401, f"missing key: 401 {body}")
    s, body = c.json("GET", "/api/users/me", key="wrong")
    expect(s == 401 and body["message"] == "Invalid API key", f"wrong key: 401 {body}")
    s, body = c.json("GET", "/api/users/me", schema=response_schema("/users/me"))
    expect(s == 200 and body["email"] == "frame@example.com", "users/me with the key")

    # --- albums
    s, albums = c.json("GET", "/api/albums", schema=response_schema("/albums"))
    by_name = {a["albumName"]: a for a in albums}
    expect(s == 200 and set(by_name) == {"Trip", "Home"}, "album listing has both albums")
    expect(by_name["Trip"]["assetCount"] == 2 and by_name["Trip"]["assets"] == [], "listing: counts, no assets")
    s, shared = c.json("GET", "/api/albums", {"shared": "true"}, schema=response_schema("/albums"))
    expect([a["albumName"] for a in shared] == ["Home"], "shared=true lists the shared album only")
    s, trip = c.json("GET", f"/api/albums/{ALB_TRIP}", schema=response_schema("/albums/{id}"))
    expect([a["id"] for a in trip["assets"]] == [A2, A1], "getAlbumInfo: assets newest first")
    original = open(os.path.join(tmp, "originals/quadrants.jpg"), "rb").read()
    expect(trip["assets"][1]["checksum"] == base64.b64encode(hashlib.sha1(original).digest()).decode(),
           "checksum is base64 sha1 of the original")
    expect(trip["assets"][1]["exifInfo"]["description"] == "Beach", "album assets carry exifInfo")
    s, bare = c.json("GET", f"/api/albums/{ALB_TRIP}", {"withoutAssets": "true"})
    expect(bare["assets"] == [] and bare["assetCount"] == 2, "withoutAssets=true")
    s, body = c.json("GET", "/api/albums/00000000-0000-4000-8000-000000000000")
    expect(s == 400 and body["message"] == "Not found or no album.read access", f"unknown album: 400 {body}")

    # --- search/metadata pagination: 3 assets, size 2
    schema = response_schema("/search/metadata", "POST")
    s, p1 = c.json("POST", "/api/search/metadata", body={"page": 1, "size": 2}, schema=schema)
    s2, p2 = c.json("POST", "/api/search/metadata", body={"page": 2, "size": 2}, schema=schema)
    ids = [a["id"] for a in p1["assets"]["items"] + p2["assets"]["items"]]
    expect(p1["assets"]["nextPage"] == "2" and p1["assets"]["count"] == 2, "page 1: 2 items, nextPage '2'")
    expect(p2["assets"]["nextPage"] is None and p2["assets"]["count"] == 1, "page 2: 1 item, nextPage null")
    expect(ids == [A3, A2, A1], f"pages cover all assets newest first {ids}")
    expect("exifInfo" not in p1["assets"]["items"][0], "no exifInfo without withExif")
    s, fav = c.json("POST", "/api/search/metadata", body={"isFavorite": True, "withExif": True}, schema=schema)
    expect([a["id"] for a in fav["assets"]["items"]] == [A1] and "exifInfo" in fav["assets"]["items"][0],
           "isFavorite + withExif")
    s, both = c.json("POST", "/api/search/metadata", body={"personIds": [P_ANA, P_BOB], "withPeople": True},
                     schema=schema)
    expect([a["id"] for a in both["assets"]["items"]] == [A2], "personIds means all of them")
    s, taken = c.json("POST", "/api/search/metadata", body={"takenAfter": "2024-01-01T00:00:00.000Z",
                                                            "albumIds": [ALB_TRIP], "order": "asc"}, schema=schema)
    expect([a["id"] for a in taken["assets"]["items"]] == [A2], "takenAfter + albumIds")

    # --- people, memories, asset info
    s, people = c.json("GET", "/api/people", schema=response_schema("/people"))
    expect([p["name"] for p in people["people"]] == ["Ana"] and people["total"] == 2 and people["hidden"] == 1,
           f"people hides hidden ones {people}")
    s, people = c.json("GET", "/api/people", {"withHidden": "true", "size": "1"}, schema=response_schema("/people"))
    expect(len(people["people"]) == 1 and people["hasNextPage"] is True, "people pagination")
    s, memories = c.json("GET", "/api/memories", {"for": "2024-07-01T00:00:00.000Z"},
                         schema=response_schema("/memories"))
    expect(len(memories) == 1 and memories[0]["assets"][0]["id"] == A1 and memories[0]["data"] == {"year": 2023},
           "memories with their assets")
    s, info = c.json("GET", f"/api/assets/{A2}", schema=response_schema("/assets/{id}"))
    expect({p["name"] for p in info["people"]} == {"Ana", "Bob"} and info["width"] is not None, "asset info")

    # --- bytes
    s, h, data = c.call("GET", f"/api/assets/{A1}/thumbnail", {"size": "preview"})
    expect(s == 200 and data == original and h["Content-Type"] == "image/jpeg"
           and h["Content-Length"] == str(len(original)), "preview without a preview file is the original")
    s, h, data = c.call("GET", f"/api/assets/{A2}/thumbnail")
    expect(data == open(os.path.join(tmp, "previews/large.jpg"), "rb").read(), "thumbnail falls back to preview")
    s, h, data = c.call("GET", f"/api/assets/{A1}/thumbnail", {"size": "fullsize"})
    expect(s == 200 and data == original, "fullsize of a JPEG redirects to the original")
    s, h, data = c.call("GET", f"/api/assets/{A1}/original")
    expect(s == 200 and data == original and "IMG_0001.jpg" in h["Content-Disposition"], "original download")
    s, h, data = c.call("GET", f"/api/assets/{A1}/original", headers={"Range": "bytes=10-19"})
    expect(s == 206 and data == original[10:20], "range request")
    s, h, data = c.call("GET", f"/api/assets/{A1}/thumbnail", {"size": "original"})
    expect(s == 400, "size=original is refused as Immich does")

    # --- violations
    s, body = c.json("GET", "/api/albums", {"foo": "1"})
    expect(s == 400 and "unknown parameter" in body["message"][0], f"unknown query parameter: 400 {body}")
    s, body = c.json("POST", "/api/search/metadata", body={"page": 1, "pageSize": 2})
    expect(s == 400, "unknown body field: 400")
    s, body = c.json("GET", "/api/albums/not-a-uuid")
    expect(s == 400, "non-UUID id: 400")
    s, body = c.json("GET", "/api/timeline/buckets")
    expect(s == 400, "unknown path: 400")
    s, violations = c.control("GET", "violations")
    expect(len(violations) == 4 and violations[0]["query"] == {"foo": ["1"]}, "4 violations recorded")
    s, log = c.control("GET", "requests")
    expect(any(e["method"] == "GET" and e["path"] == "/api/albums" and e["query"] == {"shared": ["true"]}
               and e["status"] == 200 for e in log), "request log has method, path, query, status")
    c.control("POST", "reset")

    # --- faults
    c.control("POST", "fault", {"mode": "unauthorized"})
    s, body = c.json("GET", "/api/albums")
    expect(s == 401 and body["message"] == "Invalid API key", "fault unauthorized: revoked key")
    c.control("POST", "fault", {"mode": "server-error", "count": 1})
    s, body = c.json("GET", "/api/albums")
    expect(s == 500 and body["message"] == "Internal server error" and "error" not in body, "fault server-error")
    s, body = c.json("GET", "/api/albums")
    expect(s == 200, "count=1: the next request is served again")
    c.control("POST", "fault", {"mode": "stall", "path_prefix": "/api/assets"})
    t0 = time.time()
    try:
        c.call("GET", f"/api/assets/{A1}/original", timeout=1)
        stalled = False
    except (socket.timeout, TimeoutError, urllib.error.URLError):
        stalled = True
    expect(stalled and time.time() - t0 < 3, "fault stall: the client times out")
    s, body = c.json("GET", "/api/albums")
    expect(s == 200, "stall with path_prefix leaves other paths alone")
    c.control("POST", "fault", {"mode": "truncate", "path_prefix": "/api/assets"})
    try:
        c.call("GET", f"/api/assets/{A1}/original")
        cut = False
    except http.client.IncompleteRead as e:
        cut = len(e.partial) == len(original) // 2
    expect(cut, "fault truncate: half the bytes, then the connection closes")
    c.control("POST", "fault", {"mode": "malformed-json"})
    s, h, raw = c.call("GET", "/api/albums")
    try:
        json.loads(raw)
        malformed = False
    except ValueError:
        malformed = s == 200
    expect(malformed, "fault malformed-json: 200 with a body that does not parse")
    # The hostile modes the sync's bounds are tested with.
    c.control("POST", "fault", {"mode": "gzip-bomb", "bytes": 3_000_000, "count": 1})
    s, h, raw = c.call("GET", "/api/albums", headers={"Accept-Encoding": "gzip"})
    inflated = gzip.decompress(raw) if h.get("Content-Encoding") == "gzip" else b""
    expect(s == 200 and len(raw) < 100_000 and len(inflated) > 2_900_000 and isinstance(json.loads(inflated), dict),
           f"fault gzip-bomb: {len(raw)} bytes of gzip, {len(inflated)} of valid JSON")
    c.control("POST", "fault", {"mode": "gzip-bomb", "count": 1})
    s, h, raw = c.call("GET", "/api/albums")
    expect(s == 200 and "Content-Encoding" not in h and isinstance(json.loads(raw), list),
           "fault gzip-bomb: a client that does not accept gzip gets the plain answer")
    c.control("POST", "fault", {"mode": "drip", "interval": 0.2, "count": 1})
    conn = http.client.HTTPConnection("127.0.0.1", int(c.base.rsplit(":", 1)[1]), timeout=5)
    conn.request("GET", "/api/albums", headers={"x-api-key": KEY})
    r = conn.getresponse()
    t0 = time.monotonic()
    first = r.read(3)
    expect(r.status == 200 and len(first) == 3 and time.monotonic() - t0 >= 0.3, "fault drip: the body a byte at a time")
    conn.close()
    c.control("POST", "fault", {"mode": "endless", "count": 1})
    conn = http.client.HTTPConnection("127.0.0.1", int(c.base.rsplit(":", 1)[1]), timeout=5)
    conn.request("GET", "/api/albums", headers={"x-api-key": KEY})
    r = conn.getresponse()
    got = sum(len(r.read(1 << 20)) for _ in range(8))
    expect(r.status == 200 and r.getheader("Transfer-Encoding") == "chunked" and got == 8 << 20,
           "fault endless: a chunked body past any size")
    conn.close()
    sent = c.control("GET", "sent")[1]
    expect(sent >= 8 << 20, f"the hostile bytes sent are counted: {sent}")
    c.control("POST", "fault", {"mode": "none"})
    s, body = c.json("GET", "/api/albums")
    expect(s == 200, "fault none: back to normal")

    # --- reload after the test changed library.json
    library["assets"] = library["assets"][:2]
    library["albums"][1]["assetIds"] = []
    with open(os.path.join(tmp, "library.json"), "w") as f:
        json.dump(library, f)
    c.control("POST", "library")
    s, page = c.json("POST", "/api/search/metadata", body={"size": 10})
    expect(page["assets"]["count"] == 2, "library reload")
    s, violations = c.control("GET", "violations")
    expect(violations == [], f"no violations from the well-formed requests {violations}")


def run_portable(c, tmp, library):
    s, body = c.json("GET", "/api/albums", {"shared": "true"})
    expect(s == 400 and "dropped in Immich 3.x" in body["message"][0], "--portable: shared= is refused")
    s, trip = c.json("GET", f"/api/albums/{ALB_TRIP}")  # 3.x shape: 2.7.5's required assets/owner are gone
    expect(s == 200 and "assets" not in trip and "owner" not in trip, "--portable: album without assets/owner")
    s, page = c.json("POST", "/api/search/metadata", body={"albumIds": [ALB_TRIP]})
    expect([a["id"] for a in page["assets"]["items"]] == [A2, A1] and "deviceId" not in page["assets"]["items"][0],
           "--portable: album contents through search/metadata")


if __name__ == "__main__":
    main()
