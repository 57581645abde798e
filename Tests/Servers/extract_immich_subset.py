#!/usr/bin/env python3
"""Extract the part of Immich's OpenAPI spec that `carouseld sync` uses.

Usage:
    python3 Tests/Servers/extract_immich_subset.py SPEC.json [--compare NEWER.json] \
        [--source-note TEXT] > Tests/Servers/immich-api-subset.json
    python3 Tests/Servers/extract_immich_subset.py --add SUBSET.json SPEC.json METHOD PATH NOTE > NEW.json

`--add` takes one more operation from another copy of the spec (a whole
spec, or the operation with the schemas it references, as
immich-faces-spec-1.112.1.json holds GET /faces copied from Immich's
v1.112.1 spec: the copy at hand when the sync began to read faces).

SPEC.json is Immich's own open-api/immich-openapi-specs.json (the subset in
the repo was made from the file at the "chore: version v2.7.5" commit).
NEWER.json, when given, is a later spec: every query parameter and schema
property that the later spec no longer has is listed under "absentInNewer",
so the test server's --portable mode can reject a client that depends on it.

Why a subset and not the whole spec: the test server checks every request
against it, and a client that only needs eleven operations should be told
at once when it strays outside them.
"""
import argparse
import json
import sys

OPERATIONS = [  # (method, path) relative to /api, in the order the client meets them
    ("get", "/server/ping"),
    ("get", "/server/version"),
    ("get", "/users/me"),
    ("get", "/albums"),
    ("get", "/albums/{id}"),
    ("post", "/search/metadata"),
    ("get", "/people"),
    ("get", "/memories"),
    ("get", "/assets/{id}"),
    ("get", "/assets/{id}/thumbnail"),
    ("get", "/assets/{id}/original"),
]
KEEP = ("type", "format", "enum", "nullable", "minimum", "maximum", "default", "deprecated")


def ref_name(ref):
    return ref.rsplit("/", 1)[-1]


def type_spec(spec, schema, wanted):
    """Flatten one OpenAPI schema: enums are inlined, objects become {"$ref": Name}."""
    extra = {k: schema[k] for k in KEEP if k in schema}
    if "allOf" in schema and len(schema["allOf"]) == 1:
        schema = schema["allOf"][0]
    if "$ref" in schema:
        name = ref_name(schema["$ref"])
        target = spec["components"]["schemas"][name]
        if "enum" in target:
            return {"type": target.get("type", "string"), "enum": target["enum"], **extra}
        wanted.add(name)
        return {"$ref": name, **extra}
    out = {k: schema[k] for k in KEEP if k in schema}
    out.update(extra)
    if schema.get("type") == "array":
        out["items"] = type_spec(spec, schema["items"], wanted)
    return out


def extract(spec, newer=None):
    wanted = set()
    ops = []
    for method, path in OPERATIONS:
        op = spec["paths"][path][method]
        newer_op = (newer or {}).get("paths", {}).get(path, {}).get(method)
        entry = {
            "operationId": op["operationId"],
            "method": method.upper(),
            "path": path,
            "auth": bool(op.get("security")),  # no security => public (ping, version)
            "pathParams": [],
            "query": [],
            "requestBody": None,
            "responses": {},
        }
        for p in op.get("parameters", []):
            item = {"name": p["name"], "required": bool(p.get("required")), **type_spec(spec, p["schema"], wanted)}
            entry["pathParams" if p["in"] == "path" else "query"].append(item)
        if "requestBody" in op:
            body = op["requestBody"]
            ctype, content = next(iter(body["content"].items()))
            entry["requestBody"] = {"required": bool(body.get("required")), "contentType": ctype,
                                    "schema": type_spec(spec, content["schema"], wanted)}
        for code, resp in op["responses"].items():
            ctype, content = next(iter(resp.get("content", {"": {}}).items()))
            entry["responses"][code] = {"contentType": ctype or None,
                                        "schema": type_spec(spec, content.get("schema", {}), wanted) or None}
        if newer is not None:
            if newer_op is None:
                entry["absentInNewer"] = True
            else:
                names = {p["name"] for p in newer_op.get("parameters", [])}
                gone = [q["name"] for q in entry["query"] if q["name"] not in names]
                if gone:
                    entry["absentInNewer"] = gone
        ops.append(entry)

    schemas = {}
    while wanted - schemas.keys():
        name = sorted(wanted - schemas.keys())[0]
        s = spec["components"]["schemas"][name]
        schemas[name] = {
            "required": s.get("required", []),
            "properties": {k: type_spec(spec, v, wanted) for k, v in s.get("properties", {}).items()},
        }
    if newer is not None:
        mark_absent(schemas, newer["components"]["schemas"])
    return ops, dict(sorted(schemas.items()))


def newer_ref(prop):
    prop = prop.get("items", prop)
    prop = prop["allOf"][0] if len(prop.get("allOf", [])) == 1 else prop
    return ref_name(prop["$ref"]) if "$ref" in prop else None


def mark_absent(schemas, newer_schemas):
    """List, per schema, the properties the newer spec dropped.

    A schema the newer spec renamed (e.g. PersonWithFacesResponseDto became
    PersonResponseDto under AssetResponseDto.people) is compared with the
    schema that now sits at the same place."""
    renamed = {}
    for name, s in schemas.items():
        ns = newer_schemas.get(name, {}).get("properties", {})
        for prop, t in s["properties"].items():
            t = t.get("items", t)
            if "$ref" in t and prop in ns and newer_ref(ns[prop]) not in (None, t["$ref"]):
                renamed[t["$ref"]] = newer_ref(ns[prop])
    for name, s in schemas.items():
        ns = newer_schemas.get(name) or newer_schemas.get(renamed.get(name), {})
        gone = sorted(set(s["properties"]) - set(ns.get("properties", {})))
        if gone:
            s["absentInNewer"] = gone


def add_operation(subset, spec, method, path, note):
    """Adds one operation read from another (older) copy of the spec to a
    subset, with the schemas it references that the subset lacks (those it
    has stay as the subset's own version had them)."""
    global OPERATIONS
    saved = OPERATIONS
    OPERATIONS = [(method, path)]
    try:
        spec = {**spec, "components": {"schemas": {**spec["components"]["schemas"]}}}
        ops, schemas = extract(spec)
    finally:
        OPERATIONS = saved
    ops[0]["fromSpecVersion"] = spec.get("source", {}).get("info", {}).get("version")
    subset["operations"] = [o for o in subset["operations"] if (o["method"], o["path"]) != (method.upper(), path)] + ops
    for name, schema in schemas.items():
        subset["schemas"].setdefault(name, schema)
    subset["schemas"] = dict(sorted(subset["schemas"].items()))
    subset["source"]["note"] += " " + note
    return subset


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--add":
        # --add SUBSET.json SPEC.json METHOD PATH NOTE: one more operation from another copy of the spec.
        _, _, subset_path, spec_path, method, path, note = sys.argv
        subset = add_operation(json.load(open(subset_path)), json.load(open(spec_path)), method, path, note)
        json.dump(subset, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--compare")
    ap.add_argument("--source-note", default="")
    args = ap.parse_args()
    spec = json.load(open(args.spec))
    newer = json.load(open(args.compare)) if args.compare else None
    ops, schemas = extract(spec, newer)
    api_key = spec["components"]["securitySchemes"]["api_key"]
    out = {
        "immichVersion": spec["info"]["version"],
        "source": {"file": "open-api/immich-openapi-specs.json", "info": spec["info"], "note": args.source_note},
        "newerVersionCompared": newer["info"]["version"] if newer else None,
        "basePath": spec["servers"][0]["url"],
        "auth": {"scheme": "api_key", **api_key},
        # Not in the spec (it documents only 200s); taken from Immich's server code,
        # server/src/middleware/global-exception.filter.ts and utils/access.ts.
        "errorBody": {
            "shape": {"message": "string (an array of strings for validation errors)",
                      "error": "string, HTTP reason phrase (absent on 500)",
                      "statusCode": "integer", "correlationId": "string"},
            "examples": {
                "401": {"message": "Invalid API key", "error": "Unauthorized", "statusCode": 401},
                "401-missing": {"message": "Authentication required", "error": "Unauthorized", "statusCode": 401},
                "400-unknown-id": {"message": "Not found or no album.read access", "error": "Bad Request",
                                   "statusCode": 400},
                "400-validation": {"message": ["id must be a UUID"], "error": "Bad Request", "statusCode": 400},
                "500": {"message": "Internal server error", "statusCode": 500},
            },
        },
        "operations": ops,
        "schemas": schemas,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
