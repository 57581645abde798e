#!/usr/bin/env bash
# Sets up everything (Debian packages), builds carouseld and runs the whole
# test suite: unit, property, simulator and command-line tests. CI runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== build (debug, with tests)"
swift build --build-tests

echo "== swift test"
swift test

echo "== simulate the bundled example"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
.build/debug/carouseld simulate examples/swipe.sim >"$out"
# Every line must be JSON; the example must page, tap and long-press.
python3 - "$out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
events = [l["event"] for l in lines if "event" in l]
for needed in ("willBeginDragging", "didEndDecelerating", "didEndScrollingAnimation", "didSelectItem", "longPress"):
    assert needed in events, f"the example produced no {needed}"
print(f"simulate: {len(lines)} JSON lines, {len(events)} events")
PY
echo "1 passed, 0 failed: simulate example"
