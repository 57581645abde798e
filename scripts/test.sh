#!/usr/bin/env bash
# Sets up everything (Debian packages, the QEMU test machine), builds
# carouseld and runs the whole test suite: unit, property, renderer
# reference, daemon and command-line tests, the manual pages' rendering,
# then the end-to-end tests on a real Linux kernel in QEMU. CI runs this.
#
# Every stage runs through `stage`: its output is shown and kept, its own
# summary line ("NAME: N passed, 0 failed") is read back, and the count is
# added to the one closing line. A stage that fails, or whose summary cannot
# be read, stops the suite with its name.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
declare -A ahead_pids=()
# A stage that fails stops the suite: what runs ahead is stopped with it.
trap 'for pid in "${ahead_pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$logs"' EXIT
total=0
summary=()
# Seconds per step, printed at the end: the suite's budget is 40 minutes on
# two cores, and this says where they go.
timings=()
step_start=$SECONDS
# took NAME: records the seconds since the last step ended.
took() {
    timings+=("$(( SECONDS - step_start )) s  $1")
    step_start=$SECONDS
}

# stage TITLE PATTERN COMMAND...: runs COMMAND, shows and keeps its output,
# and counts what PATTERN (a sed expression printing the number of checks
# that passed) reads from it.
stage() {
    local title=$1 pattern=$2
    shift 2
    echo "== $title"
    local log="$logs/$(( ${#summary[@]} + 1 )).log"
    if ! "$@" 2>&1 | tee "$log"; then
        echo "tests: stage failed: $title" >&2
        exit 1
    fi
    count "$title" "$pattern" "$log"
    took "$title"
}

# count TITLE PATTERN LOG: adds the number of checks that passed, as PATTERN
# reads it from LOG, to the closing line; a summary it cannot read stops the suite.
count() {
    local title=$1 pattern=$2 log=$3 passed
    passed=$(sed -n "$pattern" "$log" | tail -n 1)
    if [ -z "$passed" ]; then
        echo "tests: could not read the summary of: $title" >&2
        exit 1
    fi
    total=$((total + passed))
    summary+=("$passed $title")
}

# ahead NAME COMMAND...: starts COMMAND in the background, at a lower
# priority than the stages, its output kept for `await`. For work that waits
# on nothing of the stages before it: builds, while stages wait on servers.
ahead() {
    local name=$1
    shift
    # renice, not nice: COMMAND may be a function of this script.
    (renice -n 10 "$BASHPID" >/dev/null && "$@") >"$logs/ahead-$name.log" 2>&1 &
    ahead_pids[$name]=$!
}

# behind NAME TITLE PATTERN COMMAND...: a stage run beside the next ones
# (`ahead`, so at a lower priority), for a stage that needs one core while
# the stages after it need the other; `counted` takes its count.
behind() {
    local name=$1 title=$2 pattern=$3
    shift 3
    behind_titles[$name]=$title
    behind_patterns[$name]=$pattern
    ahead "$name" "$@"
}
declare -A behind_titles=() behind_patterns=()

# counted NAME: waits for a stage `behind` started, shows its output, and
# counts it as `stage` does. The seconds recorded are those waited.
counted() {
    local name=$1
    local title=${behind_titles[$name]} pattern=${behind_patterns[$name]}
    await "$name" "$title"
    count "$title" "$pattern" "$logs/ahead-$name.log"
}

# await NAME TITLE: waits for what `ahead` started, shows its output, and
# stops the suite when it failed. The seconds recorded are those waited.
await() {
    local name=$1 title=$2
    echo "== $title"
    if ! wait "${ahead_pids[$name]}"; then
        cat "$logs/ahead-$name.log"
        echo "tests: stage failed: $title" >&2
        exit 1
    fi
    unset "ahead_pids[$name]"
    cat "$logs/ahead-$name.log"
    took "$title (waited for it)"
}

bash scripts/setup.sh
took "setup (Debian packages)"

# Once: what the suite runs against (libraries and servers we do not write,
# whose security updates change how they fail).
bash scripts/versions.sh

# The VM's kernel, root image and initramfs (built once and cached in
# .build-vm/): mostly downloads and unpacking, beside the builds and tests
# that follow.
ahead vm-assets bash scripts/vm/build-assets.sh

# First: seconds, and no Swift needed.
stage "the C pixel kernels against their twins on x86-64, arm64 and armhf (clang, Debian's cross libraries, qemu-user for the ARM builds)" \
    's/^kernels: \([0-9]*\) passed, 0 failed.*/\1/p' bash scripts/kernels.sh

echo "== build (debug, with tests)"
swift build --build-tests
took "build (debug, with tests)"

# Swift Testing's summary ("Test run with N tests in M suites passed") counts
# tests it skipped (a replay with no seed given): those are taken off.
swift_test() {
    # A function run by `stage` is not stopped by set -e: every step says so itself.
    swift test 2>&1 | tee "$logs/swift-test.log" || return 1
    local all skipped
    all=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} .* passed.*/\1/p' "$logs/swift-test.log" | tail -n 1)
    [ -n "$all" ] || return 1
    skipped=$(grep -c '^➜ Test .* skipped' "$logs/swift-test.log" || true)
    echo "swift test: $((all - skipped)) passed, 0 failed ($skipped skipped)"
}
stage "swift test" 's/^swift test: \([0-9]*\) passed, 0 failed.*/\1/p' swift_test

simulate_example() {
    local out="$logs/simulate.jsonl"
    .build/debug/carouseld simulate scripts/demo/swipe.sim >"$out" || return 1
    # Every line must be JSON; the example must page, tap and long-press.
    python3 - "$out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
events = [l["event"] for l in lines if "event" in l]
for needed in ("willBeginDragging", "didEndDecelerating", "didEndScrollingAnimation", "didSelectItem", "longPress"):
    assert needed in events, f"the example produced no {needed}"
print(f"simulate: {len(lines)} JSON lines, {len(events)} events")
print("simulate example: 1 passed, 0 failed")
PY
}
stage "simulate the bundled example" 's/^simulate example: \([0-9]*\) passed, 0 failed$/\1/p' simulate_example

stage "the manual pages render without warnings (man -l, groff -ww)" \
    's/^man pages: \([0-9]*\) passed, 0 failed$/\1/p' bash scripts/check-man.sh

# The fuzz targets and the release build for the VM, while the next three
# stages mostly wait on their servers. One after the other: each build takes
# both cores.
release_build() {
    bash scripts/fuzz.sh build || return 1
    # The whole package, as a user's `swift build -c release` builds it (every
    # product: carouseld, carouselctl, the benchmarks, the fuzz replayer), with
    # Swift's libraries linked in for the VM. Only single products were built
    # here once, and a release build of the whole package broke unseen.
    swift build -c release --static-swift-stdlib --scratch-path .build-static
}
ahead builds release_build

stage "MQTT against a real broker: Mosquitto started here on loopback, carouseld on the offscreen display" \
    's/^mqtt: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/Servers/mqtt_e2e.py .build/debug/carouseld

# Home Assistant from PyPI (pinned in Tests/Servers/ha-requirements.txt), its
# virtual environment made once and kept in .build-ha/.
stage "Home Assistant 2024.3.3 as the MQTT client: it discovers every entity two frames announce, its automations drive each, its states agree with the frames' status" \
    's/^ha: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/Servers/ha_e2e.py .build/debug/carouseld

sync_e2e() {
    # The stand-in first: a server that did not check requests would pass a wrong client.
    python3 Tests/Servers/test_immich_server.py >"$logs/immich-stand-in.log" 2>&1 || { cat "$logs/immich-stand-in.log"; return 1; }
    tail -n 1 "$logs/immich-stand-in.log" | sed 's/^/Immich stand-in self-test: /'
    python3 Tests/Servers/sync_e2e.py .build/debug/carouseld
}
stage "carouseld sync against servers: Immich's stand-in (from its API reference, checking every request) and rclone serve webdav, the daemon on the offscreen display beside it" \
    's/^sync: \([0-9]*\) passed, 0 failed$/\1/p' sync_e2e

stage "the frame's page: carouseld-web against raw HTTP, an attacker on the LAN and its owner (sessions, origins, hostile uploads, endless bodies, a full disk, 1,000 sign-ins), beside the daemon on the offscreen display" \
    's/^web: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/Servers/web_e2e.py .build/debug/carouseld .build/debug/carouseld-web

# Selenium from PyPI (pinned in Tests/Servers/web-requirements.txt), its
# virtual environment made once and kept in .build-web/.
stage "the frame's page in Chromium at a phone's size (Selenium): sign in, drive the frame through the live view, upload from the file picker, no console error" \
    's/^browser: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/Servers/web_browser.py .build/debug/carouseld .build/debug/carouseld-web

await builds "build (the fuzz targets with libFuzzer and AddressSanitizer; release, static, for the VM)"

stage "fuzzing: the committed inputs, then a fixed count from a fixed seed per target, every target but heif (see scripts/fuzz.sh), with libFuzzer and AddressSanitizer (random seeds by hand)" \
    's/^fuzz: \([0-9]*\) passed, 0 failed$/\1/p' bash scripts/fuzz.sh gate

echo "== end-to-end on a real kernel (QEMU: bochs DRM, uinput touchscreen, udev, libinput)"
await vm-assets "the VM's kernel, image and initramfs (cached in .build-vm/)"
# Once: what the VM stages run against (the image has no security updates).
bash scripts/versions.sh --vm .build-vm
vm_binary=.build-static/release/carouseld
# The Debian package of the same release build (make deb: debhelper, then
# lintian, which fails on any error or warning not overridden with a
# reason) needs no VM: it is made beside the smoke tests, whose QEMU takes
# one core, and installed, upgraded, removed and purged with apt in the VM
# after the service's stage.
ahead deb bash scripts/deb.sh

vm_smoke() {
    python3 Tests/VM/drm_smoke.py --binary "/mnt/host/$vm_binary" || return 1
    python3 Tests/VM/input_smoke.py --binary "$vm_binary" || return 1
    echo "vm smoke: 2 passed, 0 failed"
}
stage "the DRM and input smoke tests in QEMU" 's/^vm smoke: \([0-9]*\) passed, 0 failed$/\1/p' vm_smoke

# QEMU (TCG, one vCPU) takes one core: the systemd service, then the Debian
# package, run in a second VM beside the end-to-end scenarios, calibrate
# and faults, at a lower priority (each VM is a snapshot of the same image;
# the two share nothing else).
await deb "the Debian package: make deb and lintian (made beside the smoke tests)"
service_then_deb() {
    python3 Tests/VM/service_e2e.py .build-static/release | tee "$logs/service.log" || return 1
    python3 Tests/VM/deb_e2e.py out/deb/carouseld_"$(make -s --no-print-directory version)"_"$(dpkg-architecture -qDEB_HOST_ARCH)".deb \
        | tee "$logs/deb.log" || return 1
    local service deb
    service=$(sed -n 's/^service: \([0-9]*\) passed, 0 failed$/\1/p' "$logs/service.log" | tail -n 1)
    deb=$(sed -n 's/^deb: \([0-9]*\) passed, 0 failed$/\1/p' "$logs/deb.log" | tail -n 1)
    [ -n "$service" ] && [ -n "$deb" ] || return 1
    echo "service and deb: $((service + deb)) passed, 0 failed"
}
behind vm-packaged "the systemd service (make dist's bundle installed as README.md says, run by systemd), then the Debian package (apt install, upgrade, remove and purge), in a second QEMU beside the next stages" \
    's/^service and deb: \([0-9]*\) passed, 0 failed$/\1/p' service_then_deb

stage "end-to-end scenarios in QEMU" 's/^e2e: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/VM/e2e.py "$vm_binary"

stage "calibrate in QEMU: a touchscreen mounted turned, flipped and shifted, calibrated by carouseld calibrate, then the daemon with it" \
    's/^calibrate: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/VM/calibrate_e2e.py "$vm_binary"

stage "faults in QEMU: display driver unbound and bound, touchscreen removed mid-drag, folder read-only or unmounted, disk full" \
    's/^faults: \([0-9]*\) passed, 0 failed$/\1/p' python3 Tests/VM/faults.py .build-static/release

counted vm-packaged

# One closing line for the whole suite, after each stage's count. (The soak,
# Tests/VM/soak.py, runs by hand: an hour.)
echo "== summary"
for line in "${summary[@]}"; do echo "  $line"; done
echo "== seconds per step ($SECONDS s in all)"
for line in "${timings[@]}"; do echo "  $line"; done
echo "tests: $total passed, 0 failed"
