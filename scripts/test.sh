#!/usr/bin/env bash
# Sets up everything (Debian packages), builds carouseld and runs the whole
# test suite: unit, property, simulator and command-line tests. CI runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== build (debug, with tests)"
swift build --build-tests

echo "== swift test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift test 2>&1 | tee "$log"
# Swift Testing's summary: "Test run with N tests in M suites passed".
swift_tests=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .* passed.*/\1/p' "$log" | tail -n 1)
[ -n "$swift_tests" ] || { echo "could not read the swift test summary" >&2; exit 1; }

echo "== simulate the bundled example"
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
.build/debug/carouseld simulate scripts/demo/swipe.sim >"$out"
# Every line must be JSON; the example must page, tap and long-press.
python3 - "$out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
events = [l["event"] for l in lines if "event" in l]
for needed in ("willBeginDragging", "didEndDecelerating", "didEndScrollingAnimation", "didSelectItem", "longPress"):
    assert needed in events, f"the example produced no {needed}"
print(f"simulate: {len(lines)} JSON lines, {len(events)} events")
PY
echo "simulate example: passed"

# One closing line for the whole suite.
echo "tests: $((swift_tests + 1)) passed, 0 failed"
