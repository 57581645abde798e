#!/usr/bin/env python3
"""End-to-end check of carouseld's input room on a real kernel (QEMU guest).

Boots the test VM, runs `carouseld input-test` in the guest and plays
gestures on a uinput touchscreen (uinput_touch.py), then checks what
libinput delivered through carouseld:

  1. swipe: touchDown at the start point, touchMotion along the line, touchUp,
     each coordinate within a pixel of what the touchscreen played, time
     stamps strictly increasing (frame by frame), the device's size in mm;
  2. tap: down and up at one point;
  3. removal mid-touch: the touchscreen process is killed with a finger down;
     the touch must end (touchCancel, or touchUp) before deviceRemoved;
  4. the absolute pointer (virtio-tablet) moves in panel pixels and its
     button presses come through; a PS/2 key press comes through as a key;
  5. a calibration matrix (--calibration) is applied to a touchscreen added
     later.

  Tests/VM/input_smoke.py [--binary PATH] [-v]

The binary is a path on the host inside the repository (shared at
/mnt/host), by default .build-input-release/release/carouseld, built with
  swift build -c release --static-swift-stdlib --scratch-path .build-input-release --product carouseld
Exits 0 when every check passes; prints each check as it goes.
"""

import argparse
import json
import os
import signal
import sys
import time

import machine  # noqa: F401  (scripts/vm on sys.path)
from vmlib import REPO, VM, VMError

W, H = 1280, 800
failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what), flush=True)
    if not ok:
        failures.append(what)
    return ok


class Events:
    """The JSON lines of a running input-test job, read as they come."""

    def __init__(self, job):
        self.job, self.all = job, []

    def next(self, timeout=60):
        line = self.job.readline(timeout)
        event = json.loads(line)
        self.all.append(event)
        return event

    def until(self, predicate, timeout=60, what="event"):
        """Events up to and including the first that satisfies predicate."""
        got, deadline = [], time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise VMError("no %s within %.0f s; got %r" % (what, timeout, got[-10:]))
            event = self.next(left)
            got.append(event)
            if predicate(event):
                return got


def touch_events(events):
    return [e for e in events if e["type"].startswith("touch")]


def check_increasing(events, what):
    """Time stamps never go back, and distinct frames have distinct times."""
    times = [e["t"] for e in events]
    frames = [e["t"] for e in events if e["type"] == "touchFrame"]
    check(all(a <= b for a, b in zip(times, times[1:])), "%s: time stamps never decrease" % what)
    check(all(a < b for a, b in zip(frames, frames[1:])), "%s: frame time stamps strictly increase (%d frames)"
          % (what, len(frames)))


def check_swipe(events, x0, y0, x1, y1, ms, rate=100):
    touches = touch_events(events)
    kinds = [e["type"] for e in touches if e["type"] != "touchFrame"]
    check(kinds[:1] == ["touchDown"] and kinds[-1:] == ["touchUp"] and
          set(kinds[1:-1]) <= {"touchMotion"}, "swipe: touchDown, touchMotion..., touchUp (%d events)" % len(kinds))
    down = touches[0]
    check(abs(down["x"] - x0) <= 1 and abs(down["y"] - y0) <= 1,
          "swipe: down at (%s, %s), played (%d, %d)" % (down["x"], down["y"], x0, y0))
    motions = [e for e in touches if e["type"] == "touchMotion"]
    steps = max(1, round(ms * rate / 1000.0))
    check(len(motions) == steps, "swipe: %d motion events for %d played frames" % (len(motions), steps))
    # uinput_touch.py plays frame i at x0 + (x1 - x0) * i / steps.
    worst = 0.0
    for i, m in enumerate(motions, 1):
        ex, ey = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
        worst = max(worst, abs(m["x"] - ex), abs(m["y"] - ey))
    check(worst <= 1.0, "swipe: every motion within a pixel of the played line (worst %.3f px)" % worst)
    last = motions[-1] if motions else down
    check(abs(last["x"] - x1) <= 1 and abs(last["y"] - y1) <= 1,
          "swipe: last motion at (%s, %s), played (%d, %d)" % (last["x"], last["y"], x1, y1))
    check(all(e.get("slot", 0) == down["slot"] for e in touches if "slot" in e), "swipe: one slot throughout")
    check_increasing(touches, "swipe")
    span_ms = (touches[-1]["t"] - down["t"]) / 1000.0
    check(ms * 0.8 <= span_ms <= ms * 4, "swipe: kernel time stamps span %.0f ms for a %d ms swipe" % (span_ms, ms))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=".build-input-release/release/carouseld",
                   help="carouseld, relative to the repository (default %(default)s)")
    p.add_argument("--assets", help="build-assets.sh output (default .build-vm/out)")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    binary = "/mnt/host/" + a.binary.lstrip("/")
    if not os.path.exists(os.path.join(REPO, a.binary)):
        sys.exit("input_smoke: no %s in the repository; build it first (see --help)" % a.binary)

    t0 = time.monotonic()
    with VM(assets=a.assets, share=REPO, xres=W, yres=H, pointer="virtio", verbose=a.verbose) as vm:
        print("guest ready in %.1f s" % (time.monotonic() - t0), flush=True)

        # -- carouseld probe's input part, through input-test's first dispatch --
        job = vm.spawn([binary, "input-test", "--seat", "seat0", "--size", "%dx%d" % (W, H), "--seconds", "600"])
        ev = Events(job)
        start = ev.until(lambda e: e["type"] == "ready", timeout=120, what="ready line")
        added = [e for e in start if e["type"] == "deviceAdded"]
        names = ["%s (%s: %s)" % (e["sysname"], e["name"], "+".join(e["capabilities"])) for e in added]
        print("     devices at start: %s" % ", ".join(names), flush=True)
        check(start[-1]["devices"] == len(added), "ready line counts the %d devices added" % len(added))
        check(any("keyboard" in e["capabilities"] for e in added), "the PS/2 keyboard is seen as a keyboard")
        tablet = [e for e in added if "pointer" in e["capabilities"] and "keyboard" not in e["capabilities"]]
        check(bool(tablet), "the virtio tablet is seen as a pointer")

        # -- a touchscreen appears ---------------------------------------------
        touch = vm.touchscreen(W, H)
        got = ev.until(lambda e: e["type"] == "deviceAdded" and "touch" in e["capabilities"], what="touch deviceAdded")
        dev = got[-1]
        check(dev.get("devnode") == touch.devnode, "touchscreen added as %s (%s)" % (dev.get("devnode"), touch.devnode))
        # The size as libinput's own tool reports it (libinput_device_get_size
        # too), printed as "Size: 320x200mm" in the block of "Kernel: DEVNODE".
        listing = vm.run("libinput list-devices", timeout=120).out
        block = next((b for b in listing.split("\n\n") if ("Kernel:" in b and b.split("Kernel:")[1].split()[0]
                                                               == touch.devnode)), "")
        size = next((l.split(":", 1)[1].strip() for l in block.splitlines() if l.startswith("Size:")), None)
        ours = "%.0fx%.0fmm" % (dev.get("width_mm", -1), dev.get("height_mm", -1))
        check(size is not None and size == ours,
              "touchscreen size %sx%s mm, libinput list-devices says %s" % (dev.get("width_mm"), dev.get("height_mm"), size))

        # -- swipe -------------------------------------------------------------
        x0, y0, x1, y1, ms = 1000, 400, 200, 420, 300
        touch.swipe(x0, y0, x1, y1, ms)
        swipe = ev.until(lambda e: e["type"] == "touchUp", what="touchUp after the swipe")
        swipe.append(ev.next())
        check(swipe[-1]["type"] == "touchFrame", "swipe: a touchFrame closes the lift")
        check_swipe(swipe, x0, y0, x1, y1, ms)

        # A sub-pixel position: the device has 10 units a pixel, libinput
        # must keep the fraction.
        touch.swipe(640.5, 99.3, 641.7, 99.3, 20)
        sub = ev.until(lambda e: e["type"] == "touchUp", what="touchUp after the sub-pixel swipe")
        d = [e for e in sub if e["type"] == "touchDown"][0]
        check(abs(d["x"] - 640.5) < 0.06 and abs(d["y"] - 99.3) < 0.06,
              "sub-pixel down at (%s, %s), played (640.5, 99.3)" % (d["x"], d["y"]))

        # -- tap -----------------------------------------------------------------
        touch.tap(100, 700, 50)
        tap = ev.until(lambda e: e["type"] == "touchUp", what="tap touchUp")
        td = [e for e in tap if e["type"] == "touchDown"]
        check(len(td) == 1 and abs(td[0]["x"] - 100) <= 1 and abs(td[0]["y"] - 700) <= 1,
              "tap: down at (%s, %s), played (100, 700)" % (td[0]["x"], td[0]["y"]) if td else "tap: a touchDown")
        check(not [e for e in tap if e["type"] == "touchMotion"], "tap: no motion")

        # -- removal mid-touch -----------------------------------------------------
        touch.down(300, 300)
        got = ev.until(lambda e: e["type"] == "touchDown", what="touchDown before removal")
        slot = got[-1]["slot"]
        touch.job.signal(signal.SIGKILL)  # the uinput device goes away with the finger down
        gone = ev.until(lambda e: e["type"] == "deviceRemoved", what="deviceRemoved", timeout=60)
        ended = [e for e in gone if e["type"] in ("touchCancel", "touchUp") and e.get("slot") == slot]
        check(len(ended) == 1 and gone.index(ended[0]) < len(gone) - 1,
              "removal: the touch in slot %d ended (%s) before deviceRemoved" % (slot, ended[0]["type"] if ended else "never"))
        check(ended[:1] and ended[0]["type"] == "touchCancel", "removal: libinput 1.22 reports it as touchCancel")
        check(any(e["type"] == "touchFrame" for e in gone[gone.index(ended[0]):]) if ended else False,
              "removal: a touchFrame closes the cancel")
        check(gone[-1]["sysname"] == dev["sysname"] and gone[-1]["id"] == dev["id"],
              "removal: deviceRemoved names %s, id %d" % (gone[-1]["sysname"], gone[-1]["id"]))
        print("     removal sequence: %s" % " ".join(e["type"] for e in gone), flush=True)

        # -- absolute pointer and keyboard ------------------------------------------
        vm.pointer_move(320, 200)
        got = ev.until(lambda e: e["type"] == "pointerMotionAbsolute", what="absolute pointer motion")
        m = got[-1]
        # QEMU scales to 0..0x7fff; the tablet's axis is 0..32767: exact to
        # within a pixel after two roundings.
        check(abs(m["x"] - 320) <= 1 and abs(m["y"] - 200) <= 1,
              "pointer: absolute motion at (%s, %s), sent (320, 200)" % (m["x"], m["y"]))
        vm.pointer_button(True)
        vm.pointer_button(False)
        got = ev.until(lambda e: e["type"] == "pointerButton" and not e["pressed"], what="button release")
        buttons = [(e["button"], e["pressed"]) for e in got if e["type"] == "pointerButton"]
        check(buttons == [(0x110, True), (0x110, False)], "pointer: BTN_LEFT press and release %r" % buttons)
        vm.send_key("right")
        got = ev.until(lambda e: e["type"] == "key" and not e["pressed"], what="key release")
        keys = [(e["code"], e["pressed"]) for e in got if e["type"] == "key"]
        check(keys == [(106, True), (106, False)], "keyboard: KEY_RIGHT press and release %r" % keys)
        check_increasing([e for e in ev.all if e["type"] != "ready" and not e["type"].startswith("device")],
                         "whole session")

        job.signal(signal.SIGTERM)
        job.wait(60)
        if job.err.strip():
            print("     input-test stderr:\n" + job.err, flush=True)

        # -- calibration: a mirror matrix applied to the touchscreen ---------------
        job = vm.spawn([binary, "input-test", "--size", "%dx%d" % (W, H), "--seconds", "600",
                        "--calibration", "-1 0 1 0 1 0"])
        ev = Events(job)
        ev.until(lambda e: e["type"] == "ready", timeout=120, what="ready line")
        touch = vm.touchscreen(W, H)
        ev.until(lambda e: e["type"] == "deviceAdded" and "touch" in e["capabilities"], what="touch deviceAdded")
        touch.tap(100, 700, 50)
        tap = ev.until(lambda e: e["type"] == "touchUp", what="calibrated tap")
        td = [e for e in tap if e["type"] == "touchDown"]
        check(len(td) == 1 and abs(td[0]["x"] - (W - 100)) <= 1 and abs(td[0]["y"] - 700) <= 1,
              "calibration '-1 0 1 0 1 0': tap at (100, 700) reads (%s, %s)"
              % ((td[0]["x"], td[0]["y"]) if td else ("-", "-")))
        touch.close()
        job.signal(signal.SIGTERM)
        job.wait(60)
        check("calibration" not in job.err, "calibration accepted without complaint%s" % (": " + job.err if job.err else ""))

        # -- a short run exits 0 by itself ------------------------------------------
        r = vm.run([binary, "input-test", "--seconds", "1", "--size", "%dx%d" % (W, H)], timeout=120)
        check(r.rc == 0 and '"type":"ready"' in r.out, "input-test --seconds 1 exits 0 by itself (rc %s)" % r.rc)
        r = vm.run([binary, "input-test", "--size", "12x"], timeout=120)
        check(r.rc != 0 and "--size" in r.err, "a bad --size is refused: %s" % r.err.strip().splitlines()[0])

    print("%s: %d failure(s) in %.0f s" % ("FAIL" if failures else "PASS", len(failures), time.monotonic() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except VMError as err:
        print("input_smoke: %s" % err, file=sys.stderr)
        sys.exit(1)
