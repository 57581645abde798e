#!/usr/bin/env python3
"""A test server that answers as Immich 2.7.5 does, for `carouseld sync` tests.

Reference: immich-api-subset.json, extracted from Immich's own
open-api/immich-openapi-specs.json, info.version 2.7.5 (release commit
95e57a24cb11). Behaviour the spec does not state (error bodies, pagination,
which fields each endpoint fills in, thumbnail redirects) follows Immich's
server code at that release.

Every /api request is checked against the subset: an unknown path, method,
query parameter or body field, a value of the wrong type, or a non-UUID id is
a *violation*: the server answers 400 and records it under /_test/violations.
Real Immich would mostly ignore such mistakes (its ValidationPipe strips
unknown fields), which is exactly why the tests must catch them here.

    python3 Tests/Servers/immich_server.py --port 0 --library DIR --api-key KEY \
        [--port-file F] [--portable] [--verbose]

DIR/library.json describes the library (see LIBRARY FORMAT below). The control
API for tests lives outside /api and needs no key:
    GET  /_test/violations   recorded violations (JSON list)
    GET  /_test/requests     every /api request: method, path, query, body, status
    POST /_test/reset        clear both lists
    POST /_test/library      reload DIR/library.json
    POST /_test/fault        {"mode": "none"|"unauthorized"|"server-error"|"stall"|
                              "truncate"|"malformed-json"|"gzip-bomb"|"drip"|"endless",
                              "path_prefix": "/api/assets",
                              "count": N (optional: only the next N matching requests),
                              "seconds": S (stall length, default 600)}
                             The hostile modes, for the sync's bounds:
                               gzip-bomb: a JSON answer sent gzip-encoded (to a client that
                                 accepts gzip) that inflates to "bytes" (default 60 MB) of valid
                                 JSON, a page of assets repeated; about 60 KB on the wire.
                               drip: the answer's headers, then its body a byte every
                                 "interval" seconds (default 0.9: under any stall rule).
                               endless: a chunked body that never ends ("interval" seconds
                                 between 64 KiB chunks, default 0: as fast as the client reads).
                             GET /_test/sent: bytes of the hostile bodies sent so far.
--portable additionally rejects query parameters and body fields that Immich
3.x dropped, and leaves out of responses the fields 3.x no longer sends
(both listed as "absentInNewer" in the subset), so a client that passes in
this mode works against 2.7 and 3.x servers.

LIBRARY FORMAT (ids are UUIDs; times ISO 8601; "file" paths relative to DIR):
{"user": {"id", "name", "email"},                                 (optional)
 "people": [{"id", "name", "isHidden"?, "birthDate"?}],
 "assets": [{"id", "type": "IMAGE"|"VIDEO", "file", "preview"?, "thumbnail"?,
             "fullsize"?, "originalFileName"?, "fileCreatedAt", "localDateTime"?,
             "updatedAt"?, "createdAt"?, "fileModifiedAt"?, "checksum"?,
             "isFavorite"?, "visibility"?, "isTrashed"?, "duration"?,
             "width"?, "height"?, "exifInfo"?: {"description", "dateTimeOriginal",
             any other ExifResponseDto field}, "people"?: [person ids]}],
 "albums": [{"id", "albumName", "description"?, "assetIds", "shared"?,
             "createdAt"?, "updatedAt"?}],
 "memories": [{"id", "memoryAt", "year", "assetIds", "isSaved"?, "isTrashed"?,
               "showAt"?, "hideAt"?}]}
The checksum defaults to base64(sha1(original)), as Immich stores it. Without a
"thumbnail" file the preview is served, without a "preview" the original (for
images; a video without preview answers 404). Real Immich serves WebP for
size=thumbnail and JPEG for size=preview by default: clients must read the
Content-Type, not assume one.
"""
import argparse
import base64
import hashlib
import json
import mimetypes
import os
import re
import socket
import threading
import urllib.parse
import time
import uuid
import zlib
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
WEB_IMAGES = {".avif", ".bmp", ".gif", ".jpeg", ".jpg", ".png", ".webp"}  # Immich's webSupportedImage
# Fixed table first: the mimetypes module also reads /etc/mime.types, which differs between machines.
MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp",
        ".gif": "image/gif", ".avif": "image/avif", ".heic": "image/heic", ".heif": "image/heif",
        ".mp4": "video/mp4", ".mov": "video/quicktime"}
REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}
FAULTS = {"none", "unauthorized", "server-error", "stall", "truncate", "malformed-json", "gzip-bomb", "drip", "endless"}


def gzip_bomb(size):
    """gzip of `size` bytes of valid JSON (a search answer whose items repeat one asset):
    what a hostile server sends a client that accepts gzip."""
    item = json.dumps({"id": "00000000-0000-4000-8000-000000000000", "type": "IMAGE", "originalFileName": "x" * 64,
                       "fileCreatedAt": "2020-01-01T00:00:00.000Z", "exifInfo": {"description": "y" * 64}}).encode() + b","
    head, tail = b'{"assets":{"total":0,"count":0,"nextPage":null,"facets":[],"items":[', b'{}]},"albums":{"items":[]}}'
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip stream
    out = [z.compress(head)]
    block = item * ((1 << 20) // len(item))
    written = len(head)
    while written + len(block) + len(tail) < size:
        out.append(z.compress(block))
        written += len(block)
    out.append(z.compress(item * ((size - written - len(tail)) // len(item))))
    out.append(z.compress(tail))
    out.append(z.flush())
    return b"".join(out)


class Violation(Exception):
    pass


# ---------------------------------------------------------------- type checks
def mime(name):
    ext = os.path.splitext(name)[1].lower()
    return MIME.get(ext) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def parse_time(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def check(spec, t, value, where, problems, portable=False):
    """Check a decoded JSON value against a subset type; append problems."""
    if value is None:
        if not t.get("nullable") and t:
            problems.append(f"{where}: null is not allowed")
        return
    if "$ref" in t:
        schema = spec["schemas"][t["$ref"]]
        if not isinstance(value, dict):
            return problems.append(f"{where}: expected an object ({t['$ref']})")
        gone = schema.get("absentInNewer", []) if portable else []
        for key, v in value.items():
            if key not in schema["properties"]:
                problems.append(f"{where}.{key}: unknown field (not in {t['$ref']})")
            elif key in gone:
                problems.append(f"{where}.{key}: field dropped in Immich 3.x ({t['$ref']})")
            else:
                check(spec, schema["properties"][key], v, f"{where}.{key}", problems, portable)
        for key in schema["required"]:
            if key not in value:
                problems.append(f"{where}.{key}: required field missing")
        return
    kind = t.get("type")
    ok = {"string": isinstance(value, str), "boolean": isinstance(value, bool), "array": isinstance(value, list),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "number": isinstance(value, (int, float)) and not isinstance(value, bool)}.get(kind, True)
    if not ok:
        return problems.append(f"{where}: expected {kind}, got {json.dumps(value)[:40]}")
    if "enum" in t and value not in t["enum"]:
        problems.append(f"{where}: {value!r} is not one of {t['enum']}")
    if t.get("format") == "uuid" and not UUID_RE.match(value):
        problems.append(f"{where}: must be a UUID")
    if t.get("format") == "date-time":
        try:
            parse_time(value)
        except ValueError:
            problems.append(f"{where}: not an ISO 8601 date-time")
    if kind in ("integer", "number"):
        if "minimum" in t and value < t["minimum"] or "maximum" in t and value > t["maximum"]:
            problems.append(f"{where}: {value} outside [{t.get('minimum')}, {t.get('maximum')}]")
    if kind == "array":
        for i, item in enumerate(value):
            check(spec, t["items"], item, f"{where}[{i}]", problems, portable)


def coerce_query(t, raw):
    """Turn a query string value into the JSON value Immich's pipes would make."""
    kind = t.get("type")
    if kind == "boolean":
        return {"true": True, "false": False}.get(raw, raw)
    if kind in ("integer", "number"):
        try:
            number = float(raw)
            return int(number) if number.is_integer() else number
        except ValueError:
            return raw
    return raw


def strip_dropped(spec, t, value):
    """--portable: leave out of a response what Immich 3.x no longer sends."""
    if isinstance(value, list) and "items" in t:
        for item in value:
            strip_dropped(spec, t["items"], item)
    elif isinstance(value, dict) and "$ref" in t:
        schema = spec["schemas"][t["$ref"]]
        for key in schema.get("absentInNewer", []):
            value.pop(key, None)
        for key, v in value.items():
            strip_dropped(spec, schema["properties"].get(key, {}), v)


# -------------------------------------------------------------------- library
def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker, or (None, None)."""
    i = 2
    while i + 9 < len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None, None


class Library:
    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "library.json")) as f:
            data = json.load(f)
        self.user = {"id": "7e5a1c3e-7b2f-4b8e-9a51-0d1f2e3c4b5a", "name": "Frame Owner",
                     "email": "frame@example.com", **data.get("user", {})}
        self.people = {p["id"]: p for p in data.get("people", [])}
        self.assets = {}
        for a in data.get("assets", []):
            a = dict(a)
            blob = self.read(a["file"])
            a.setdefault("checksum", base64.b64encode(hashlib.sha1(blob).digest()).decode())
            a["size"] = len(blob)
            if "width" not in a:
                a["width"], a["height"] = jpeg_size(blob) if blob[:2] == b"\xff\xd8" else (None, None)
            a.setdefault("originalFileName", os.path.basename(a["file"]))
            for key, default in (("localDateTime", "fileCreatedAt"), ("fileModifiedAt", "fileCreatedAt"),
                                 ("updatedAt", "fileCreatedAt"), ("createdAt", "updatedAt")):
                a.setdefault(key, a[default])
            self.assets[a["id"]] = a
        self.albums = {al["id"]: al for al in data.get("albums", [])}
        self.memories = data.get("memories", [])
        # A key without face.read (the test's way to refuse GET /faces).
        self.faces_forbidden = data.get("facesForbidden", False)
        for thing in [self.user, *self.people.values(), *self.assets.values(), *self.albums.values(), *self.memories]:
            if not UUID_RE.match(thing["id"]):  # Immich ids are UUIDs; fail loudly on a broken fixture
                raise ValueError(f"library.json: id {thing['id']!r} is not a UUID")

    def read(self, rel):
        with open(os.path.join(self.root, rel), "rb") as f:
            return f.read()

    def visible(self, a, visibilities=("timeline", "archive")):
        return a.get("visibility", "timeline") in visibilities and not a.get("isTrashed")

    # --- JSON shapes, field for field as Immich 2.7.5's mappers fill them in
    def user_json(self, user=None):
        u = user or self.user
        return {"id": u["id"], "email": u["email"], "name": u["name"], "profileImagePath": "",
                "avatarColor": "primary", "profileChangedAt": "2024-01-01T00:00:00.000Z"}

    def user_admin_json(self):
        return {**self.user_json(), "storageLabel": "admin", "shouldChangePassword": False, "isAdmin": True,
                "createdAt": "2024-01-01T00:00:00.000Z", "deletedAt": None, "updatedAt": "2024-01-01T00:00:00.000Z",
                "oauthId": "", "quotaSizeInBytes": None, "quotaUsageInBytes": sum(a["size"] for a in self.assets.values()),
                "status": "active", "license": None}

    def person_json(self, p):
        pid = p["id"]
        return {"id": pid, "name": p.get("name", ""), "birthDate": p.get("birthDate"),
                "thumbnailPath": f"/data/thumbs/{self.user['id']}/{pid[:2]}/{pid[2:4]}/{pid}.jpeg",
                "isHidden": p.get("isHidden", False), "isFavorite": p.get("isFavorite", False),
                "updatedAt": p.get("updatedAt", "2024-01-01T00:00:00.000Z")}

    def exif_json(self, a):
        exif = dict.fromkeys(["make", "model", "exifImageWidth", "exifImageHeight", "fileSizeInByte", "orientation",
                              "dateTimeOriginal", "modifyDate", "timeZone", "lensModel", "fNumber", "focalLength",
                              "iso", "exposureTime", "latitude", "longitude", "city", "state", "country",
                              "description", "projectionType", "rating"])
        exif.update(exifImageWidth=a["width"], exifImageHeight=a["height"], fileSizeInByte=a["size"],
                    dateTimeOriginal=a["fileCreatedAt"], modifyDate=a["fileModifiedAt"], description="")
        exif.update(a.get("exifInfo", {}))
        return exif

    def asset_json(self, a, exif=False, people=False, full=False):
        """full: as GET /assets/{id}; exif/people: as search's withExif/withPeople."""
        d = {"id": a["id"], "createdAt": a["createdAt"], "deviceAssetId": f"web-{a['originalFileName']}",
             "ownerId": self.user["id"], "deviceId": "WEB", "libraryId": None, "type": a.get("type", "IMAGE"),
             "originalPath": f"/data/library/{self.user['id']}/{a['file']}",
             "originalFileName": a["originalFileName"],
             "originalMimeType": mime(a["originalFileName"]),
             "thumbhash": None, "fileCreatedAt": a["fileCreatedAt"], "fileModifiedAt": a["fileModifiedAt"],
             "localDateTime": a["localDateTime"], "updatedAt": a["updatedAt"],
             "isFavorite": a.get("isFavorite", False), "isArchived": a.get("visibility") == "archive",
             "isTrashed": a.get("isTrashed", False), "visibility": a.get("visibility", "timeline"),
             "duration": a.get("duration", "0:00:00.00000"), "livePhotoVideoId": None, "people": [],
             "checksum": a["checksum"], "isOffline": False, "hasMetadata": True, "duplicateId": None,
             "resized": True, "width": a["width"], "height": a["height"], "isEdited": False}
        if exif or full:
            d["exifInfo"] = self.exif_json(a)
        if people or full:
            d["people"] = [{**self.person_json(self.people[pid]), "faces": [{
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, a["id"] + pid)), "imageWidth": a["width"] or 0,
                "imageHeight": a["height"] or 0, "boundingBoxX1": 0, "boundingBoxY1": 0,
                "boundingBoxX2": (a["width"] or 0) // 2, "boundingBoxY2": (a["height"] or 0) // 2,
                "sourceType": "machine-learning"}]} for pid in a.get("people", [])]
        if full:
            d.update(owner=self.user_json(), tags=[], unassignedFaces=[], stack=None)
        return d

    def album_assets(self, al):
        items = [self.assets[i] for i in al.get("assetIds", []) if self.visible(self.assets[i])]
        return sorted(items, key=lambda a: a["fileCreatedAt"], reverse=True)

    def album_json(self, al, with_assets):
        items = self.album_assets(al)
        viewer = {"id": "0b0b0b0b-1111-4222-8333-444455556666", "name": "Viewer", "email": "viewer@example.com"}
        d = {"albumName": al["albumName"], "description": al.get("description", ""),
             "albumThumbnailAssetId": items[0]["id"] if items else None,
             "createdAt": al.get("createdAt", "2024-01-01T00:00:00.000Z"),
             "updatedAt": al.get("updatedAt", "2024-01-01T00:00:00.000Z"), "id": al["id"],
             "ownerId": self.user["id"], "owner": self.user_json(),
             "albumUsers": [{"user": self.user_json(viewer), "role": "viewer"}] if al.get("shared") else [],
             "shared": bool(al.get("shared")), "hasSharedLink": False,
             "assets": [self.asset_json(a, exif=True) for a in items] if with_assets else [],
             "assetCount": len(items), "isActivityEnabled": True, "order": "desc"}
        if items:  # Immich takes these from an aggregate; dates are truncated to the day
            days = sorted(a["localDateTime"][:10] for a in items)
            d.update(startDate=days[0] + "T00:00:00.000Z", endDate=days[-1] + "T00:00:00.000Z",
                     lastModifiedAssetTimestamp=max(a["updatedAt"] for a in items))
        return d


# --------------------------------------------------------------------- server
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Immich behind Express does
    server_version = "immich-test-server"

    def setup(self):
        super().setup()
        # Headers and body leave in separate writes: without TCP_NODELAY, Nagle holds the body
        # until the client's delayed ACK (40 ms a request on loopback).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        if self.server.verbose:
            super().log_message(fmt, *args)

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        self.url_path, self.query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length) if length else b""
        self.fault = None
        if self.url_path.startswith("/_test/"):
            return self.control()
        srv = self.server
        entry = {"method": self.command, "path": self.url_path, "query": self.query, "body": None, "status": None}
        self.entry = entry
        with srv.lock:
            srv.requests.append(entry)
        try:
            self.op, path_params, body = self.validate()
            entry["body"] = body
        except Violation as v:
            problems = v.args[0]
            with srv.lock:
                srv.violations.append({"method": self.command, "path": self.url_path, "query": self.query,
                                       "problems": problems})
            return self.error(400, ["violation: " + p for p in problems])
        self.fault = srv.take_fault(self.url_path)
        mode = self.fault and self.fault["mode"]
        if mode == "stall":  # hold the connection open, answer nothing, then hang up
            self.fault["released"].wait(self.fault.get("seconds", 600))
            self.close_connection = True
            return
        if mode == "server-error":
            return self.send_json(500, {"message": "Internal server error", "statusCode": 500,
                                        "correlationId": uuid.uuid4().hex[:8]})
        if self.op["auth"]:
            key = self.headers.get("x-api-key")
            if not key:
                return self.error(401, "Authentication required")
            if key != srv.api_key or mode == "unauthorized":
                return self.error(401, "Invalid API key")
        getattr(self, "op_" + self.op["operationId"])(srv.library, body=body, **path_params)

    def validate(self):
        """Match the request to one subset operation and check all it carries."""
        spec, problems = self.server.spec, []
        if not self.url_path.startswith(spec["basePath"] + "/"):
            raise Violation([f"{self.url_path}: not under {spec['basePath']}"])
        rel = self.url_path[len(spec["basePath"]):]
        candidates = [(op, m.groupdict()) for op, rx in self.server.routes for m in [rx.match(rel)] if m]
        if not candidates:
            raise Violation([f"{rel}: no such path in the Immich {spec['immichVersion']} subset"])
        matching = [(op, pp) for op, pp in candidates if op["method"] == self.command]
        if not matching:
            raise Violation([f"{self.command} {rel}: method not allowed "
                             f"(spec has {sorted({op['method'] for op, _ in candidates})})"])
        op, path_params = matching[0]
        for p in op["pathParams"]:
            check(spec, p, path_params[p["name"]], p["name"], problems)
        known = {q["name"]: q for q in op["query"]}
        for name, values in self.query.items():
            if name not in known:
                problems.append(f"query {name}: unknown parameter")
            elif len(values) > 1:
                problems.append(f"query {name}: given {len(values)} times")
            elif self.server.portable and name in op.get("absentInNewer", []):
                problems.append(f"query {name}: parameter dropped in Immich 3.x")
            else:
                check(spec, known[name], coerce_query(known[name], values[0]), f"query {name}", problems)
        for q in op["query"]:
            if q["required"] and q["name"] not in self.query:
                problems.append(f"query {q['name']}: required parameter missing")
        body = None
        if op["requestBody"]:
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != op["requestBody"]["contentType"]:
                problems.append(f"body: Content-Type {ctype!r}, expected {op['requestBody']['contentType']}")
            try:
                body = json.loads(self.raw_body or b"null")
            except ValueError:
                problems.append("body: not valid JSON")
            if body is None and op["requestBody"]["required"]:
                problems.append("body: required")
            elif body is not None:
                check(spec, op["requestBody"]["schema"], body, "body", problems, self.server.portable)
        elif self.raw_body:
            problems.append("body: this operation takes no request body")
        if problems:
            raise Violation(problems)
        return op, path_params, body

    def param(self, name, default=None):
        """A (validated) query parameter of this request, typed as the spec says."""
        spec = next(q for q in self.op["query"] if q["name"] == name)
        return coerce_query(spec, self.query[name][0]) if name in self.query else default

    # ------------------------------------------------------------- responses
    def send(self, status, body, ctype, headers=()):
        mode = self.fault and self.fault["mode"]
        if mode == "malformed-json" and ctype.startswith("application/json") and status == 200:
            body = body[: len(body) // 2]  # cut mid-document: a valid-looking 200 that will not parse
        self.entry["status"] = status
        if mode in ("gzip-bomb", "drip", "endless"):
            return self.send_hostile(mode, status, body, ctype, headers)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if mode == "truncate":  # promise N bytes, deliver N/2, hang up
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_hostile(self, mode, status, body, ctype, headers):
        """The hostile modes (see the module's help): the client must bound each."""
        srv = self.server
        self.close_connection = True
        try:
            if mode == "gzip-bomb" and ctype.startswith("application/json") and "gzip" in self.headers.get("Accept-Encoding", ""):
                bomb = srv.bomb(self.fault.get("bytes", 60_000_000))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(bomb)))
                self.end_headers()
                self.wfile.write(bomb)
                srv.count_sent(len(bomb))
            elif mode == "drip":
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    srv.count_sent(1)
                    if srv.unstall_wait(self.fault, self.fault.get("interval", 0.9)):
                        return
            elif mode == "endless":
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = (b"[" if ctype.startswith("application/json") else body[:2]) + b"0," * (32 << 10)
                frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
                while True:
                    self.wfile.write(frame)
                    srv.count_sent(len(chunk))
                    if self.fault.get("interval") and srv.unstall_wait(self.fault, self.fault["interval"]):
                        return
                    chunk = b"0," * (32 << 10)
                    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            else:  # gzip refused by the client: the plain answer
                self.fault = None
                self.close_connection = False
                return self.send(status, body, ctype, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what a bounded client does

    def send_json(self, status, obj, schema=None):
        if schema is not None and self.server.portable:
            strip_dropped(self.server.spec, schema, obj)
        self.send(status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def error(self, status, message):
        self.send_json(status, {"message": message, "error": REASONS[status], "statusCode": status,
                                "correlationId": uuid.uuid4().hex[:8]})

    def ok(self, obj):
        self.send_json(200, obj, self.op["responses"]["200"]["schema"])

    def send_file(self, lib, rel, filename):
        path = os.path.join(lib.root, rel)
        st = os.stat(path)
        etag = f'W/"{st.st_size:x}-{int(st.st_mtime * 1000):x}"'
        headers = [("Cache-Control", "private, max-age=86400, no-transform"), ("ETag", etag),
                   ("Accept-Ranges", "bytes"),
                   ("Content-Disposition", "inline; filename*=UTF-8''" + urllib.parse.quote(filename))]
        ctype = mime(rel)
        if self.headers.get("If-None-Match") == etag:
            self.entry["status"] = 304
            self.send_response(304)
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            return
        data = lib.read(rel)
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m and (m[1] or m[2]):  # single range, as Express's sendFile serves it
            start, end = (int(m[1]), int(m[2] or len(data) - 1)) if m[1] else (len(data) - int(m[2]), len(data) - 1)
            if start >= len(data) or start > end:
                return self.send(416, b"", ctype, [("Content-Range", f"bytes */{len(data)}")])
            end = min(end, len(data) - 1)
            return self.send(206, data[start:end + 1], ctype, headers + [("Content-Range", f"bytes {start}-{end}/{len(data)}")])
        self.send(200, data, ctype, headers)

    def redirect(self, location):
        body = f"Found. Redirecting to {location}".encode()
        self.send(302, body, "text/plain; charset=utf-8", [("Location", location)])

    # ------------------------------------------------------------ operations
    def op_pingServer(self, lib, body):
        self.ok({"res": "pong"})

    def op_getServerVersion(self, lib, body):
        major, minor, patch = (int(x) for x in self.server.spec["immichVersion"].split("."))
        self.ok({"major": major, "minor": minor, "patch": patch})

    def op_getMyUser(self, lib, body):
        self.ok(lib.user_admin_json())

    def op_getAllAlbums(self, lib, body):
        albums = list(lib.albums.values())
        asset_id, shared = self.param("assetId"), self.param("shared")
        if asset_id:  # "Ignores the shared parameter"
            albums = [al for al in albums if asset_id in al.get("assetIds", [])]
        elif shared is not None:
            albums = [al for al in albums if bool(al.get("shared")) == shared]
        self.ok([lib.album_json(al, with_assets=False) for al in albums])

    def op_getAlbumInfo(self, lib, body, id):
        # Immich checks access before looking the album up, and its access check
        # throws BadRequestException: an unknown (or foreign) album id is a 400.
        if id not in lib.albums:
            return self.error(400, "Not found or no album.read access")
        al = lib.albums[id]
        d = lib.album_json(al, with_assets=not self.param("withoutAssets", False))
        if al.get("shared"):
            d["contributorCounts"] = [{"userId": lib.user["id"], "assetCount": d["assetCount"]}]
        self.ok(d)

    def op_searchAssets(self, lib, body):
        q = body or {}
        vis = q.get("visibility", "timeline")
        items = [a for a in lib.assets.values() if a.get("visibility", "timeline") == vis
                 and (q.get("withDeleted") or not a.get("isTrashed"))]
        for album_id in q.get("albumIds") or []:  # Immich: in ALL given albums
            items = [a for a in items if a["id"] in lib.albums.get(album_id, {}).get("assetIds", [])]
        for person_id in q.get("personIds") or []:  # likewise: shows ALL given people
            items = [a for a in items if person_id in a.get("people", [])]
        if q.get("isNotInAlbum") and not q.get("albumIds"):
            items = [a for a in items if not any(a["id"] in al.get("assetIds", []) for al in lib.albums.values())]
        field_tests = {"isFavorite": lambda a, v: a.get("isFavorite", False) == v,
                       "type": lambda a, v: a.get("type", "IMAGE") == v, "id": lambda a, v: a["id"] == v,
                       "checksum": lambda a, v: a["checksum"] == v,
                       "originalFileName": lambda a, v: v.lower() in a["originalFileName"].lower(),
                       "description": lambda a, v: v.lower() in (lib.exif_json(a)["description"] or "").lower()}
        for name, (key, sign) in {"takenAfter": ("fileCreatedAt", 1), "takenBefore": ("fileCreatedAt", -1),
                                  "updatedAfter": ("updatedAt", 1), "updatedBefore": ("updatedAt", -1),
                                  "createdAfter": ("createdAt", 1), "createdBefore": ("createdAt", -1)}.items():
            field_tests[name] = lambda a, v, key=key, sign=sign: (parse_time(a[key]) - parse_time(v)).total_seconds() * sign >= 0
        for name in ("city", "state", "country", "make", "model", "lensModel", "rating"):
            field_tests[name] = lambda a, v, name=name: lib.exif_json(a).get(name) == v
        for name, test in field_tests.items():  # other MetadataSearchDto fields are accepted, not applied
            if name in q:
                items = [a for a in items if test(a, q[name])]
        items.sort(key=lambda a: (parse_time(a["fileCreatedAt"]), a["id"]), reverse=q.get("order", "desc") == "desc")
        page, size = q.get("page", 1), q.get("size") or 250
        start = (int(page) - 1) * int(size)
        window = items[start:start + int(size) + 1]  # one extra row tells whether a next page exists
        has_next = len(window) > size
        window = window[:int(size)]
        assets = [lib.asset_json(a, exif=q.get("withExif", False), people=q.get("withPeople", False)) for a in window]
        self.ok({"albums": {"total": 0, "count": 0, "items": [], "facets": []},
                 "assets": {"total": len(assets), "count": len(assets), "items": assets, "facets": [],
                            "nextPage": str(int(page) + 1) if has_next else None}})

    def op_getAllPeople(self, lib, body):
        people = sorted(lib.people.values(), key=lambda p: (p.get("isHidden", False), not p.get("name"), p.get("name", "")))
        shown = [p for p in people if self.param("withHidden", False) or not p.get("isHidden")]
        page, size = int(self.param("page", 1)), int(self.param("size", 500))
        window = shown[(page - 1) * size:page * size]
        self.ok({"people": [lib.person_json(p) for p in window], "hasNextPage": len(shown) > page * size,
                 "total": len(people), "hidden": sum(1 for p in people if p.get("isHidden"))})

    def op_searchMemories(self, lib, body):
        found = []
        for m in lib.memories:
            when = self.param("for")
            if self.param("isSaved") is not None and m.get("isSaved", False) != self.param("isSaved"):
                continue
            if bool(m.get("isTrashed")) != bool(self.param("isTrashed", False)):
                continue
            if when and (m.get("showAt") and parse_time(m["showAt"]) > parse_time(when)
                         or m.get("hideAt") and parse_time(m["hideAt"]) < parse_time(when)):
                continue
            assets = sorted((lib.assets[i] for i in m.get("assetIds", [])
                             if lib.visible(lib.assets[i], ("timeline",))), key=lambda a: a["fileCreatedAt"])
            d = {"id": m["id"], "createdAt": m.get("createdAt", m["memoryAt"]),
                 "updatedAt": m.get("updatedAt", m["memoryAt"]), "memoryAt": m["memoryAt"],
                 "ownerId": lib.user["id"], "type": "on_this_day", "data": {"year": m["year"]},
                 "isSaved": m.get("isSaved", False), "assets": [lib.asset_json(a) for a in assets]}
            d.update({k: m[k] for k in ("showAt", "hideAt", "seenAt") if m.get(k)})
            found.append(d)
        found.sort(key=lambda d: d["memoryAt"], reverse=self.param("order", "desc") != "asc")
        self.ok(found[: self.param("size")] if self.param("size") else found)

    def asset_or_400(self, lib, id, permission):
        if id not in lib.assets:  # same access-check behaviour as albums
            self.error(400, f"Not found or no {permission} access")
            return None
        return lib.assets[id]

    def op_getAssetInfo(self, lib, body, id):
        a = self.asset_or_400(lib, id, "asset.read")
        if a:
            self.ok(lib.asset_json(a, full=True))

    def op_viewAsset(self, lib, body, id):
        a = self.asset_or_400(lib, id, "asset.view")
        if not a:
            return
        size = self.param("size", "thumbnail")
        if size == "original":
            return self.error(400, "May not request original file")
        rest = [(k, v[0]) for k, v in self.query.items() if k != "size"]
        if size == "fullsize" and not a.get("fullsize"):
            # Immich: a web-readable original is its own fullsize (redirect to
            # .../original), otherwise fall back to the preview. Clients must
            # follow redirects.
            if os.path.splitext(a["file"])[1].lower() in WEB_IMAGES:
                return self.redirect("original?" + urllib.parse.urlencode(rest))
            return self.redirect(f"{self.url_path}?" + urllib.parse.urlencode(rest + [("size", "preview")]))
        is_image = a.get("type", "IMAGE") == "IMAGE"
        rel = {"fullsize": a.get("fullsize"), "preview": a.get("preview") or (a["file"] if is_image else None),
               "thumbnail": a.get("thumbnail") or a.get("preview") or (a["file"] if is_image else None)}[size]
        if not rel:
            return self.error(404, "Asset media not found")
        base = os.path.splitext(a["originalFileName"])[0]
        self.send_file(lib, rel, f"{base}_{size}{os.path.splitext(rel)[1]}")

    def op_downloadAsset(self, lib, body, id):
        a = self.asset_or_400(lib, id, "asset.download")
        if a:
            self.send_file(lib, a["file"], os.path.splitext(a["originalFileName"])[0] + os.path.splitext(a["file"])[1])

    def op_getFaces(self, lib, body):
        # The faces Immich found in an asset, boxes in pixels of the image it
        # looked at; an asset's "faces" in library.json: {"box": [x1, y1, x2, y2], "person": id or absent}.
        if lib.faces_forbidden:
            return self.error(403, "Missing required permission: face.read")
        a = self.asset_or_400(lib, self.param("id"), "asset.read")
        if not a:
            return
        self.ok([{"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{a['id']}/face/{i}")),
                  "imageWidth": f.get("imageWidth", a["width"] or 0), "imageHeight": f.get("imageHeight", a["height"] or 0),
                  "boundingBoxX1": f["box"][0], "boundingBoxY1": f["box"][1],
                  "boundingBoxX2": f["box"][2], "boundingBoxY2": f["box"][3],
                  "person": lib.person_json(lib.people[f["person"]]) if f.get("person") else None}
                 for i, f in enumerate(a.get("faces", []))])

    # --------------------------------------------------------- control API
    def control(self):
        srv, name = self.server, self.url_path[len("/_test/"):]
        self.entry = {}
        try:
            body = json.loads(self.raw_body or b"{}")
        except ValueError:
            return self.send_json(400, {"message": "control body is not JSON"})
        if self.command == "GET" and name == "sent":
            with srv.lock:
                return self.send_json(200, srv.sent)
        if self.command == "GET" and name in ("violations", "requests"):
            with srv.lock:
                return self.send_json(200, list(getattr(srv, name)))
        if self.command == "POST" and name == "reset":
            with srv.lock:
                srv.violations.clear()
                srv.requests.clear()
            return self.send_json(200, {"ok": True})
        if self.command == "POST" and name == "library":
            try:
                srv.library = Library(srv.library.root)
            except (OSError, ValueError, KeyError) as e:
                return self.send_json(400, {"message": f"library not reloaded: {e!r}"})
            return self.send_json(200, {"ok": True, "assets": len(srv.library.assets)})
        if self.command == "POST" and name == "fault":
            if body.get("mode") not in FAULTS:
                return self.send_json(400, {"message": f"mode must be one of {sorted(FAULTS)}"})
            srv.set_fault(body)
            return self.send_json(200, {"ok": True})
        self.send_json(404, {"message": f"no control endpoint {self.command} {self.url_path}"})


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a stalled handler must not keep the process alive

    def __init__(self, addr, library, api_key, spec, portable=False, verbose=False):
        super().__init__(addr, Handler)
        self.library, self.api_key, self.spec = library, api_key, spec
        self.portable, self.verbose = portable, verbose
        self.routes = [(op, re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", op["path"]) + "$"))
                       for op in spec["operations"]]
        self.lock = threading.Lock()
        self.violations, self.requests = [], []
        self.fault = {"mode": "none"}
        self.unstall = threading.Event()
        self.sent = 0
        self.bombs = {}

    def bomb(self, size):
        with self.lock:
            if size not in self.bombs:
                self.bombs[size] = gzip_bomb(size)
            return self.bombs[size]

    def count_sent(self, n):
        with self.lock:
            self.sent += n

    def unstall_wait(self, fault, seconds):
        """Waits `seconds`; true when the fault was changed meanwhile (the hostile answer ends)."""
        return fault["released"].wait(seconds)

    def set_fault(self, fault):
        if fault.get("mode") == "gzip-bomb":
            # Made now, not when the request comes: making 60 MB takes seconds, which would eat
            # into the deadline of the request it answers.
            self.bomb(fault.get("bytes", 60_000_000))
        with self.lock:
            self.fault = dict(fault)
            self.unstall.set()  # release requests stalled by the previous fault
            self.unstall = threading.Event()

    def take_fault(self, path):
        """The fault that applies to this request, if any (counts it down)."""
        with self.lock:
            f = self.fault
            prefix = f.get("path_prefix") or "/api"
            prefix = prefix if prefix.startswith("/api") else "/api" + prefix
            if f["mode"] == "none" or not path.startswith(prefix):
                return None
            if "count" in f:
                f["count"] -= 1
                if f["count"] <= 0:
                    self.fault = {"mode": "none"}
            return {**f, "released": self.unstall}

    def server_close(self):
        self.unstall.set()
        super().server_close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--library", required=True)
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--subset", default=os.path.join(HERE, "immich-api-subset.json"))
    ap.add_argument("--portable", action="store_true", help="also reject what Immich 3.x dropped")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    with open(args.subset) as f:
        spec = json.load(f)
    server = Server((args.host, args.port), Library(args.library), args.api_key, spec, args.portable, args.verbose)
    if args.port_file:  # written only once listening; renamed so readers never see half a number
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{server.server_address[1]}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
