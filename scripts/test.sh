#!/usr/bin/env bash
# Sets up everything (Debian packages, the QEMU test machine), builds
# carouseld and runs the whole test suite: unit, property, renderer
# reference, daemon and command-line tests, then the end-to-end tests on a
# real Linux kernel in QEMU. CI runs this.
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

echo "== MQTT against a real broker: Mosquitto started here on loopback, carouseld on the offscreen display"
mqtt_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log"' EXIT
python3 scripts/mqtt_e2e.py .build/debug/carouseld | tee "$mqtt_log"
mqtt_passed=$(sed -n 's/^mqtt: \([0-9]*\) passed, 0 failed$/\1/p' "$mqtt_log")
[ -n "$mqtt_passed" ] || { echo "could not read the MQTT summary" >&2; exit 1; }

echo "== fuzzing: the committed inputs, then a fixed count from a fixed seed per target, every target but heif (see scripts/fuzz.sh), with libFuzzer and AddressSanitizer (random seeds by hand)"
fuzz_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log" "$fuzz_log"' EXIT
bash scripts/fuzz.sh gate | tee "$fuzz_log"
fuzz_passed=$(sed -n 's/^fuzz: \([0-9]*\) passed, 0 failed$/\1/p' "$fuzz_log")
[ -n "$fuzz_passed" ] || { echo "could not read the fuzz summary" >&2; exit 1; }

echo "== end-to-end on a real kernel (QEMU: bochs DRM, uinput touchscreen, udev, libinput)"
# The VM's kernel, root image and initramfs are built once and cached in .build-vm/.
bash scripts/vm/build-assets.sh
# The whole package, as a user's `swift build -c release` builds it (every
# product: carouseld, carouselctl, the benchmarks, the fuzz replayer), with
# Swift's libraries linked in for the VM. Only single products were built
# here once, and a release build of the whole package broke unseen.
swift build -c release --static-swift-stdlib --scratch-path .build-static
vm_binary=.build-static/release/carouseld
python3 scripts/vm/drm_smoke.py --binary "/mnt/host/$vm_binary"
python3 scripts/vm/input_smoke.py --binary "$vm_binary"
e2e_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log" "$fuzz_log" "$e2e_log"' EXIT
python3 scripts/vm/e2e.py "$vm_binary" | tee "$e2e_log"
e2e_passed=$(sed -n 's/^e2e: \([0-9]*\) passed, 0 failed$/\1/p' "$e2e_log")
[ -n "$e2e_passed" ] || { echo "could not read the e2e summary" >&2; exit 1; }

echo "== calibrate in QEMU: a touchscreen mounted turned, flipped and shifted, calibrated by carouseld calibrate, then the daemon with it"
cal_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log" "$fuzz_log" "$e2e_log" "$cal_log"' EXIT
python3 scripts/vm/calibrate_e2e.py "$vm_binary" | tee "$cal_log"
cal_passed=$(sed -n 's/^calibrate: \([0-9]*\) passed, 0 failed$/\1/p' "$cal_log")
[ -n "$cal_passed" ] || { echo "could not read the calibrate summary" >&2; exit 1; }

echo "== faults in QEMU: display driver unbound and bound, touchscreen removed mid-drag, folder read-only or unmounted, disk full"
faults_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log" "$fuzz_log" "$e2e_log" "$cal_log" "$faults_log"' EXIT
python3 scripts/vm/faults.py .build-static/release | tee "$faults_log"
faults_passed=$(sed -n 's/^faults: \([0-9]*\) passed, 0 failed$/\1/p' "$faults_log")
[ -n "$faults_passed" ] || { echo "could not read the faults summary" >&2; exit 1; }

echo "== the systemd service in QEMU: make dist's bundle installed as README.md says, run by systemd"
service_log=$(mktemp)
trap 'rm -f "$log" "$out" "$mqtt_log" "$fuzz_log" "$e2e_log" "$cal_log" "$faults_log" "$service_log"' EXIT
python3 scripts/vm/service_e2e.py .build-static/release | tee "$service_log"
service_passed=$(sed -n 's/^service: \([0-9]*\) passed, 0 failed$/\1/p' "$service_log")
[ -n "$service_passed" ] || { echo "could not read the service test summary" >&2; exit 1; }

# One closing line for the whole suite: Swift tests, the simulate example,
# the MQTT checks, the fuzz targets, the two VM smoke tests, the e2e scenarios, the calibrate scenarios, the fault
# scenarios and the service checks. (The soak, scripts/vm/soak.py, runs by
# hand: an hour.)
echo "tests: $((swift_tests + 1 + mqtt_passed + fuzz_passed + 2 + e2e_passed + cal_passed + faults_passed + service_passed)) passed, 0 failed"
